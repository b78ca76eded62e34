package mysql

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func hdr(n int, seq byte) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), seq} }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// testChunkBytes replaces the 16 MiB chunk size in the framing tables: the logic is the same and
// the race detector's cost grows with every byte copied.
const testChunkBytes = 10

func newTestPacketIO(r io.Reader, w io.Writer, max int) *packetIO {
	p := newPacketIO(r, w, max)
	p.chunkBytes = testChunkBytes
	return p
}

func TestReadPacket(t *testing.T) {
	const maxChunkBytes = testChunkBytes
	big := bytes.Repeat([]byte{'x'}, maxChunkBytes)
	tests := []struct {
		name    string
		stream  []byte
		max     int
		want    [][]byte // payloads read in order, before wantErr
		wantErr error
	}{
		{name: "empty stream", stream: nil, wantErr: io.EOF},
		{name: "one packet", stream: cat(hdr(3, 0), []byte("abc")), want: [][]byte{[]byte("abc")}, wantErr: io.EOF},
		{name: "empty payload", stream: hdr(0, 0), want: [][]byte{{}}, wantErr: io.EOF},
		{name: "sequence continues", stream: cat(hdr(1, 0), []byte("a"), hdr(1, 1), []byte("b")),
			want: [][]byte{[]byte("a"), []byte("b")}, wantErr: io.EOF},
		{name: "wrong sequence", stream: cat(hdr(1, 5), []byte("a")), wantErr: errPacketSequence},
		{name: "second packet out of order", stream: cat(hdr(1, 0), []byte("a"), hdr(1, 0), []byte("b")),
			want: [][]byte{[]byte("a")}, wantErr: errPacketSequence},
		{name: "truncated header", stream: []byte{3, 0}, wantErr: io.ErrUnexpectedEOF},
		{name: "truncated payload", stream: cat(hdr(3, 0), []byte("ab")), wantErr: io.ErrUnexpectedEOF},
		// Only the header is in the stream: the limit must be enforced before reading the payload.
		{name: "too large, refused from its header", stream: hdr(9, 0), max: 8, wantErr: errPacketTooLarge},
		{name: "exactly the limit", stream: cat(hdr(8, 0), []byte("01234567")), max: 8,
			want: [][]byte{[]byte("01234567")}, wantErr: io.EOF},
		{name: "two chunks", stream: cat(hdr(maxChunkBytes, 0), big, hdr(2, 1), []byte("yz")),
			want: [][]byte{cat(big, []byte("yz"))}, wantErr: io.EOF},
		{name: "exact multiple ends with an empty chunk", stream: cat(hdr(maxChunkBytes, 0), big, hdr(0, 1)),
			want: [][]byte{big}, wantErr: io.EOF},
		{name: "missing continuation", stream: cat(hdr(maxChunkBytes, 0), big), wantErr: io.ErrUnexpectedEOF},
		{name: "continuation out of order", stream: cat(hdr(maxChunkBytes, 0), big, hdr(0, 7)),
			wantErr: errPacketSequence},
		{name: "too large in the second chunk", stream: cat(hdr(maxChunkBytes, 0), big, hdr(3, 1)),
			max: maxChunkBytes + 2, wantErr: errPacketTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1 << 30
			}
			p := newTestPacketIO(bytes.NewReader(tt.stream), io.Discard, max)
			for i, want := range tt.want {
				got, err := p.readPacket()
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("packet %d: got %d bytes, want %d", i, len(got), len(want))
				}
			}
			if _, err := p.readPacket(); !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestDiscardOversized(t *testing.T) {
	const maxChunkBytes = testChunkBytes
	big := bytes.Repeat([]byte{'x'}, maxChunkBytes)
	stream := cat(hdr(maxChunkBytes, 0), big, hdr(maxChunkBytes, 1), big, hdr(4, 2), []byte("tail"))
	p := newTestPacketIO(bytes.NewReader(stream), io.Discard, 5)
	if _, err := p.readPacket(); !errors.Is(err, errPacketTooLarge) {
		t.Fatalf("got %v", err)
	}
	if err := p.discardOversized(1 << 30); err != nil {
		t.Fatal(err)
	}
	if p.seq != 3 {
		t.Fatalf("sequence after discard %d, want 3 (the ERR goes out with it)", p.seq)
	}
	if n, _ := p.br.Read(make([]byte, 1)); n != 0 {
		t.Fatal("stream not consumed")
	}

	// The discard limit stops a client that keeps sending.
	p = newTestPacketIO(bytes.NewReader(stream), io.Discard, 5)
	p.readPacket()
	if err := p.discardOversized(maxChunkBytes + 10); !errors.Is(err, errPacketTooLarge) {
		t.Fatalf("got %v, want the limit to stop the discard", err)
	}
}

func TestWritePacket(t *testing.T) {
	const maxChunkBytes = testChunkBytes
	for _, n := range []int{0, 1, 5, maxChunkBytes - 1, maxChunkBytes, maxChunkBytes + 1, 2*maxChunkBytes + 7, 3 * maxChunkBytes} {
		var out bytes.Buffer
		p := newTestPacketIO(strings.NewReader(""), &out, 1<<30)
		p.seq = 3
		payload := bytes.Repeat([]byte{0xab}, n)
		if err := p.writePacket(append(p.startPacket(), payload...)); err != nil {
			t.Fatal(err)
		}
		if err := p.flush(); err != nil {
			t.Fatal(err)
		}
		chunks := n/maxChunkBytes + 1
		if out.Len() != n+4*chunks {
			t.Fatalf("%d: wrote %d bytes, want %d", n, out.Len(), n+4*chunks)
		}
		r := newTestPacketIO(&out, io.Discard, 1<<30)
		r.seq = 3
		got, err := r.readPacket()
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("%d: round trip differs", n)
		}
		if r.seq != p.seq || int(p.seq) != 3+chunks {
			t.Fatalf("%d: sequence %d/%d, want %d", n, r.seq, p.seq, 3+chunks)
		}
	}
}

func TestReaderBounds(t *testing.T) {
	tests := []struct {
		in   []byte
		read func(r *reader) any
		want any
		bad  bool
	}{
		{[]byte{5}, func(r *reader) any { n, _ := r.lenencInt(); return n }, uint64(5), false},
		{[]byte{0xfc, 1, 2}, func(r *reader) any { n, _ := r.lenencInt(); return n }, uint64(0x201), false},
		{[]byte{0xfc, 1}, func(r *reader) any { n, _ := r.lenencInt(); return n }, uint64(0), true},
		{[]byte{0xfd, 1, 2, 3}, func(r *reader) any { n, _ := r.lenencInt(); return n }, uint64(0x030201), false},
		{[]byte{0xfe, 1, 0, 0, 0, 0, 0, 0}, func(r *reader) any { n, _ := r.lenencInt(); return n }, uint64(0), true},
		{[]byte{0xff}, func(r *reader) any { n, _ := r.lenencInt(); return n }, uint64(0), true},
		{[]byte{3, 'a', 'b'}, func(r *reader) any { return string(r.lenencBytes()) }, "", true},
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'a'}, func(r *reader) any { return string(r.lenencBytes()) }, "", true},
		{[]byte("ab\x00cd"), func(r *reader) any { return string(r.nulString()) + "|" + string(r.nulString()) }, "ab|cd", false},
		{[]byte{1, 2, 3}, func(r *reader) any { return r.u32() }, uint32(0), true},
		{[]byte{1}, func(r *reader) any { return r.take(-1) == nil }, true, true},
	}
	for i, tt := range tests {
		r := reader{b: tt.in}
		if got := tt.read(&r); got != tt.want || r.bad != tt.bad {
			t.Errorf("%d: got %v (bad %v), want %v (bad %v)", i, got, r.bad, tt.want, tt.bad)
		}
	}
}

func TestLenencRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 250, 251, 1<<16 - 1, 1 << 16, 1<<24 - 1, 1 << 24, 1<<64 - 1} {
		r := reader{b: appendLenencInt(nil, n)}
		if got, null := r.lenencInt(); got != n || null || r.bad || r.remaining() != 0 {
			t.Errorf("%d: got %d", n, got)
		}
	}
}

// TestRealChunkSize runs one payload past the real 16 MiB chunk size through both directions.
func TestRealChunkSize(t *testing.T) {
	payload := bytes.Repeat([]byte{'y'}, maxChunkBytes+3)
	var out bytes.Buffer
	w := newPacketIO(strings.NewReader(""), &out, 0)
	if err := w.writePacket(append(w.startPacket(), payload...)); err != nil {
		t.Fatal(err)
	}
	w.flush()
	if h := out.Bytes()[:4]; !bytes.Equal(h, hdr(maxChunkBytes, 0)) {
		t.Fatalf("first header %x", h)
	}
	r := newPacketIO(&out, io.Discard, maxChunkBytes+3)
	got, err := r.readPacket()
	if err != nil || !bytes.Equal(got, payload) || r.seq != 2 {
		t.Fatalf("got %d bytes, seq %d, err %v", len(got), r.seq, err)
	}
}
