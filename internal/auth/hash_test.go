package auth

import (
	"crypto/sha1"
	"crypto/sha256"
	"testing"
)

func TestNativeHash(t *testing.T) {
	// MySQL's documented values of PASSWORD() / mysql.user for mysql_native_password.
	for _, tt := range []struct{ pw, want string }{
		{"password", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"},
		{"root", "*81F5E21E35407D884A6CD4A731AEBFB6AF209E1B"},
		{"", ""},
	} {
		if got := NativeHash(tt.pw); got != tt.want {
			t.Errorf("NativeHash(%q) = %s, want %s", tt.pw, got, tt.want)
		}
	}
}

// SHA-256 crypt ("$5$", which MySQL's my_crypt_genhash implements with longer salts) against
// vectors from `openssl passwd -5 -salt S P` (glibc's crypt(3) gives the same).
func TestSHA256Crypt(t *testing.T) {
	for _, tt := range []struct {
		salt, pw string
		rounds   int
		want     string
	}{
		{"saltstring", "Hello world!", 5000, "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
		{"saltstringsaltst", "Hello world!", 10000, "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"},
		{"toolongsaltstrin", "This is just a test", 5000, "Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"},
		{"kiln", "a password longer than thirty-two bytes, to take the long branch", 5000, "dt3/RMNKroYRxeVxHcNiAbU7kybLxds2tg7dg.b7NQ5"},
	} {
		got := SHA256Crypt([]byte(tt.pw), []byte(tt.salt), tt.rounds)
		if got != tt.want {
			t.Errorf("SHA256Crypt(%q, %q, %d) = %s, want %s", tt.pw, tt.salt, tt.rounds, got, tt.want)
		}
	}
}

func TestCachingSHA2Hash(t *testing.T) {
	h, err := CachingSHA2Hash("secret")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 70 || h[:7] != "$A$005$" || !ValidStored(CachingSHA2Password, h) {
		t.Fatalf("stored form %q", h)
	}
	if !CheckCachingSHA2Password(h, "secret") || CheckCachingSHA2Password(h, "secreT") || CheckCachingSHA2Password(h, "") {
		t.Fatal("verification")
	}
	h2, _ := CachingSHA2Hash("secret")
	if h2 == h {
		t.Fatal("two hashes of one password share a salt")
	}
	salt := []byte("abcdefghijklmnopqrst")
	if a, b := CachingSHA2HashWithSalt("pw", salt, 5000), CachingSHA2HashWithSalt("pw", salt, 5000); a != b {
		t.Fatal("not deterministic")
	}
	for _, bad := range []string{"$A$005$short", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", "$A$xyz$" + string(salt) + "0123456789012345678901234567890123456789012"} {
		if ValidStored(CachingSHA2Password, bad) {
			t.Errorf("ValidStored(%q)", bad)
		}
	}
	if !ValidStored(NativePassword, NativeHash("x")) || ValidStored(NativePassword, "*XYZ") {
		t.Fatal("native ValidStored")
	}
}

func TestTokens(t *testing.T) {
	scramble := []byte("0123456789abcdefghij")
	// Client side of mysql_native_password.
	s1 := sha1.Sum([]byte("pw"))
	s2 := sha1.Sum(s1[:])
	h := sha1.New()
	h.Write(scramble)
	h.Write(s2[:])
	tok := h.Sum(nil)
	for i := range tok {
		tok[i] ^= s1[i]
	}
	if !CheckNativeToken(NativeHash("pw"), scramble, tok) || CheckNativeToken(NativeHash("pX"), scramble, tok) {
		t.Fatal("native token")
	}
	if !CheckNativeToken("", scramble, nil) || CheckNativeToken("", scramble, tok) || CheckNativeToken(NativeHash("pw"), scramble, nil) {
		t.Fatal("native empty")
	}
	// Client side of caching_sha2_password.
	m1 := sha256.Sum256([]byte("pw"))
	m2 := sha256.Sum256(m1[:])
	hh := sha256.New()
	hh.Write(m2[:])
	hh.Write(scramble)
	st := hh.Sum(nil)
	for i := range st {
		st[i] ^= m1[i]
	}
	if !CheckSHA2FastToken(SHA2Digest("pw"), scramble, st) || CheckSHA2FastToken(SHA2Digest("pX"), scramble, st) {
		t.Fatal("sha2 token")
	}
}
