// Package auth holds the password hashes of MySQL's two authentication plugins, as MySQL 8 stores
// them in mysql.user.authentication_string, and their verification. It is a leaf package: the SQL
// layer hashes passwords with it (CREATE USER, ALTER USER, SET PASSWORD) and the protocol layer
// verifies login tokens against the stored strings.
//
// Stored forms:
//   - mysql_native_password: '*' + upper hex SHA1(SHA1(password)) (41 characters), "" for no password.
//   - caching_sha2_password: '$A$005$' + 20-byte salt + 43 characters of SHA-256 crypt (Drepper's
//     algorithm, 5000 rounds = "005" x 1000) over the password and salt, "" for no password.
package auth

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The plugins Kiln speaks.
const (
	NativePassword      = "mysql_native_password"
	CachingSHA2Password = "caching_sha2_password"
)

const (
	// SaltLen is caching_sha2_password's salt length (MySQL's CRYPT_SALT_LENGTH).
	SaltLen = 20
	// sha2Rounds is the iteration count MySQL uses ("005" thousands).
	sha2Rounds  = 5000
	sha2Prefix  = "$A$"
	sha2HashLen = 43
	nativeLen   = 41
)

// ErrBadHash is returned for a stored string that is not a hash of the plugin's format (CREATE USER
// ... IDENTIFIED WITH p AS 'x' with a malformed x).
var ErrBadHash = errors.New("auth: malformed password hash")

// NativeHash returns mysql_native_password's stored form of password ("" for an empty one), the value
// MySQL 5.7's PASSWORD() returned.
func NativeHash(password string) string {
	if password == "" {
		return ""
	}
	s1 := sha1.Sum([]byte(password))
	s2 := sha1.Sum(s1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(s2[:]))
}

// NativeStage2 decodes a stored native hash into SHA1(SHA1(password)).
func NativeStage2(stored string) ([]byte, error) {
	if len(stored) != nativeLen || stored[0] != '*' {
		return nil, ErrBadHash
	}
	b, err := hex.DecodeString(stored[1:])
	if err != nil {
		return nil, ErrBadHash
	}
	return b, nil
}

// CheckNativeToken verifies a mysql_native_password login token against the stored hash:
// token = SHA1(pw) XOR SHA1(scramble, SHA1(SHA1(pw))), so SHA1(token XOR SHA1(scramble, stage2))
// must equal stage2. An empty stored hash accepts only an empty token.
func CheckNativeToken(stored string, scramble, token []byte) bool {
	if stored == "" {
		return len(token) == 0
	}
	stage2, err := NativeStage2(stored)
	if err != nil || len(token) != sha1.Size {
		return false
	}
	h := sha1.New()
	h.Write(scramble)
	h.Write(stage2)
	x := h.Sum(nil)
	for i := range x {
		x[i] ^= token[i]
	}
	got := sha1.Sum(x)
	return subtle.ConstantTimeCompare(got[:], stage2) == 1
}

// NewSalt returns a caching_sha2_password salt as MySQL makes them: printable 7-bit bytes without
// NUL or '$' (the separator of the stored form).
func NewSalt() ([]byte, error) {
	s := make([]byte, SaltLen)
	if _, err := rand.Read(s); err != nil {
		return nil, fmt.Errorf("auth: salt: %w", err)
	}
	for i := range s {
		s[i] &= 0x7f
		if s[i] == 0 || s[i] == '$' {
			s[i]++
		}
	}
	return s, nil
}

// CachingSHA2Hash returns caching_sha2_password's stored form of password with a new random salt
// ("" for an empty password).
func CachingSHA2Hash(password string) (string, error) {
	if password == "" {
		return "", nil
	}
	salt, err := NewSalt()
	if err != nil {
		return "", err
	}
	return CachingSHA2HashWithSalt(password, salt, sha2Rounds), nil
}

// CachingSHA2HashWithSalt is CachingSHA2Hash with a given salt and round count (a multiple of 1000).
func CachingSHA2HashWithSalt(password string, salt []byte, rounds int) string {
	return fmt.Sprintf("%s%03d$%s%s", sha2Prefix, rounds/1000, salt, SHA256Crypt([]byte(password), salt, rounds))
}

// parseSHA2 splits a stored caching_sha2_password string into its rounds, salt and hash.
func parseSHA2(stored string) (rounds int, salt, hash string, err error) {
	// $A$005$ + 20 salt + 43 hash
	if len(stored) != len(sha2Prefix)+4+SaltLen+sha2HashLen || !strings.HasPrefix(stored, sha2Prefix) || stored[6] != '$' {
		return 0, "", "", ErrBadHash
	}
	n, err := strconv.Atoi(stored[3:6])
	if err != nil || n < 5 || n > 4095 {
		return 0, "", "", ErrBadHash
	}
	rest := stored[7:]
	return n * 1000, rest[:SaltLen], rest[SaltLen:], nil
}

// ValidStored reports whether stored is a valid authentication string of plugin (for IDENTIFIED
// WITH plugin AS 'string').
func ValidStored(plugin, stored string) bool {
	if stored == "" {
		return true
	}
	switch plugin {
	case NativePassword:
		_, err := NativeStage2(stored)
		return err == nil
	case CachingSHA2Password:
		_, _, _, err := parseSHA2(stored)
		return err == nil
	}
	return false
}

// CheckCachingSHA2Password verifies a cleartext password (from full authentication) against a
// stored caching_sha2_password string.
func CheckCachingSHA2Password(stored, password string) bool {
	if stored == "" {
		return password == ""
	}
	rounds, salt, hash, err := parseSHA2(stored)
	if err != nil {
		return false
	}
	got := SHA256Crypt([]byte(password), []byte(salt), rounds)
	return subtle.ConstantTimeCompare([]byte(got), []byte(hash)) == 1
}

// SHA2Digest is what caching_sha2_password's server-side cache keeps for an account after a full
// authentication: SHA256(SHA256(password)).
func SHA2Digest(password string) [32]byte {
	m1 := sha256.Sum256([]byte(password))
	return sha256.Sum256(m1[:])
}

// CheckSHA2FastToken verifies a caching_sha2_password fast-auth token against a cached digest:
// token = SHA256(pw) XOR SHA256(SHA256(SHA256(pw)), scramble), so SHA256(token XOR
// SHA256(digest, scramble)) must equal the digest.
func CheckSHA2FastToken(digest [32]byte, scramble, token []byte) bool {
	if len(token) != sha256.Size {
		return false
	}
	h := sha256.New()
	h.Write(digest[:])
	h.Write(scramble)
	x := h.Sum(nil)
	for i := range x {
		x[i] ^= token[i]
	}
	got := sha256.Sum256(x)
	return subtle.ConstantTimeCompare(got[:], digest[:]) == 1
}

const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// SHA256Crypt is the hash part of Drepper's SHA-256 crypt ("$5$") for a password, salt and round
// count: 43 characters of its base64 alphabet. Unlike glibc it takes the salt as given (MySQL uses
// 20-byte salts where "$5$" caps them at 16).
func SHA256Crypt(password, salt []byte, rounds int) string {
	b := sha256.New()
	b.Write(password)
	b.Write(salt)
	b.Write(password)
	db := b.Sum(nil)

	a := sha256.New()
	a.Write(password)
	a.Write(salt)
	n := len(password)
	for ; n > 32; n -= 32 {
		a.Write(db)
	}
	a.Write(db[:n])
	for n = len(password); n > 0; n >>= 1 {
		if n&1 != 0 {
			a.Write(db)
		} else {
			a.Write(password)
		}
	}
	da := a.Sum(nil)

	dp := sha256.New()
	for range len(password) {
		dp.Write(password)
	}
	pSeq := repeatTo(dp.Sum(nil), len(password))

	ds := sha256.New()
	for range 16 + int(da[0]) {
		ds.Write(salt)
	}
	sSeq := repeatTo(ds.Sum(nil), len(salt))

	c := sha256.New()
	for r := range rounds {
		c.Reset()
		if r&1 != 0 {
			c.Write(pSeq)
		} else {
			c.Write(da)
		}
		if r%3 != 0 {
			c.Write(sSeq)
		}
		if r%7 != 0 {
			c.Write(pSeq)
		}
		if r&1 != 0 {
			c.Write(da)
		} else {
			c.Write(pSeq)
		}
		da = c.Sum(da[:0])
	}

	out := make([]byte, 0, sha2HashLen)
	enc := func(b2, b1, b0 byte, n int) {
		w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
		for range n {
			out = append(out, cryptAlphabet[w&0x3f])
			w >>= 6
		}
	}
	enc(da[0], da[10], da[20], 4)
	enc(da[21], da[1], da[11], 4)
	enc(da[12], da[22], da[2], 4)
	enc(da[3], da[13], da[23], 4)
	enc(da[24], da[4], da[14], 4)
	enc(da[15], da[25], da[5], 4)
	enc(da[6], da[16], da[26], 4)
	enc(da[27], da[7], da[17], 4)
	enc(da[18], da[28], da[8], 4)
	enc(da[9], da[19], da[29], 4)
	enc(0, da[31], da[30], 3)
	return string(out)
}

func repeatTo(d []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, d[:min(len(d), n-len(out))]...)
	}
	return out
}
