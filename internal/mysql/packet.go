package mysql

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// maxChunkBytes is the largest payload one physical packet carries; a logical payload of this size
// or more continues in the next packet, and one that is an exact multiple ends with an empty one.
const maxChunkBytes = 1<<24 - 1

const (
	readBufferBytes  = 16 << 10
	writeBufferBytes = 16 << 10
	// keepBufferBytes bounds the payload buffers a connection keeps between commands, so that one
	// big query or row does not pin its memory for the life of the connection.
	keepBufferBytes = 1 << 20
)

var (
	errPacketTooLarge = errors.New("mysql: packet larger than max_allowed_packet")
	errPacketSequence = errors.New("mysql: packets out of order")
	// errPacketMemory: the server-wide memory account refused a payload buffer (Config.Memory).
	errPacketMemory = errors.New("mysql: payload refused by the server's memory limit")
)

// packetIO frames payloads into MySQL packets on one connection. It is not safe for concurrent
// use: only the connection's goroutine touches it.
//
// Sequence ids: every packet of one exchange (a command and its response, or the whole handshake)
// carries the next id, whoever sends it. resetSeq starts a new exchange.
type packetIO struct {
	br  *bufio.Reader
	bw  *bufio.Writer
	seq uint8

	// maxPayloadBytes bounds a logical payload the peer may send us.
	maxPayloadBytes int
	// chunkBytes is maxChunkBytes; tests shrink it to exercise chunking cheaply.
	chunkBytes int

	rbuf []byte // payload of the last readPacket; reused
	wbuf []byte // payload being built, after 4 reserved header bytes; reused

	// acct, if set, is charged for a payload buffer beyond keepBufferBytes; racct is what it holds.
	acct  MemoryAccount
	racct int64

	// discardBytes and discardMore describe what is left of an oversized packet after readPacket
	// gave up on it: bytes of the current chunk, and whether further chunks follow.
	discardBytes int
	discardMore  bool
}

func newPacketIO(r io.Reader, w io.Writer, maxPayloadBytes int) *packetIO {
	return &packetIO{
		br:              bufio.NewReaderSize(r, readBufferBytes),
		bw:              bufio.NewWriterSize(w, writeBufferBytes),
		maxPayloadBytes: maxPayloadBytes,
		chunkBytes:      maxChunkBytes,
	}
}

func (p *packetIO) resetSeq() { p.seq = 0 }

// readPacket returns the next logical payload, reassembled from its chunks. The slice is valid
// until the next call. A payload larger than maxPayloadBytes yields errPacketTooLarge as soon as a
// chunk header announces it, before its bytes are read; see discardOversized.
func (p *packetIO) readPacket() ([]byte, error) {
	var hdr [4]byte
	buf := p.rbuf[:0]
	for {
		if _, err := io.ReadFull(p.br, hdr[:]); err != nil {
			if err == io.ErrUnexpectedEOF || (err == io.EOF && len(buf) > 0) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		n := int(uint32(hdr[0]) | uint32(hdr[1])<<8 | uint32(hdr[2])<<16)
		if hdr[3] != p.seq {
			return nil, fmt.Errorf("%w: got sequence id %d, want %d", errPacketSequence, hdr[3], p.seq)
		}
		p.seq++
		if len(buf)+n > p.maxPayloadBytes {
			p.discardBytes, p.discardMore = n, n == p.chunkBytes
			p.rbuf = buf[:0]
			return nil, errPacketTooLarge
		}
		if need := int64(len(buf) + n); need > keepBufferBytes && p.acct != nil && need > p.racct {
			if !p.acct.Reserve(need - p.racct) {
				p.discardBytes, p.discardMore = n, n == p.chunkBytes
				p.rbuf = buf[:0]
				return nil, errPacketMemory
			}
			p.racct = need
		}
		start := len(buf)
		buf = grow(buf, n)
		if _, err := io.ReadFull(p.br, buf[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			p.rbuf = buf[:0]
			return nil, err
		}
		if n < p.chunkBytes {
			p.rbuf = buf
			return buf, nil
		}
	}
}

// grow extends b by n bytes, reallocating when needed. Allocation happens only for bytes the peer
// has announced and that are within the payload limit.
func grow(b []byte, n int) []byte {
	if need := len(b) + n; need > cap(b) {
		nb := make([]byte, len(b), max(need, 2*cap(b), 512))
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// discardOversized reads and drops the rest of the packet readPacket refused, at most limitBytes,
// so that the client, which is still writing it, gets to read our error instead of a reset
// connection. The caller bounds the time with a read deadline.
func (p *packetIO) discardOversized(limitBytes int64) error {
	var hdr [4]byte
	for {
		if int64(p.discardBytes) > limitBytes {
			return errPacketTooLarge
		}
		m, err := p.br.Discard(p.discardBytes)
		limitBytes -= int64(m)
		if err != nil {
			return err
		}
		if !p.discardMore {
			return nil
		}
		if _, err := io.ReadFull(p.br, hdr[:]); err != nil {
			return err
		}
		if hdr[3] != p.seq {
			return errPacketSequence
		}
		p.seq++
		p.discardBytes = int(uint32(hdr[0]) | uint32(hdr[1])<<8 | uint32(hdr[2])<<16)
		p.discardMore = p.discardBytes == p.chunkBytes
	}
}

// startPacket returns the reusable write buffer with the 4 header bytes reserved; append the
// payload and pass it to writePacket.
func (p *packetIO) startPacket() []byte {
	if p.wbuf == nil {
		p.wbuf = make([]byte, 4, 1024)
	}
	return p.wbuf[:4]
}

// writePacket frames b[4:] (b as returned by startPacket, then appended to) into the buffered
// writer. Nothing reaches the network before flush unless the buffer fills.
func (p *packetIO) writePacket(b []byte) error {
	if cap(b) <= keepBufferBytes {
		p.wbuf = b[:0]
	}
	payload := len(b) - 4
	if payload < p.chunkBytes {
		putHeader(b, payload, p.seq)
		p.seq++
		_, err := p.bw.Write(b)
		return err
	}
	var hdr [4]byte
	data := b[4:]
	for {
		n := min(len(data), p.chunkBytes)
		putHeader(hdr[:], n, p.seq)
		p.seq++
		if _, err := p.bw.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := p.bw.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		if n < p.chunkBytes {
			return nil
		}
	}
}

func putHeader(b []byte, n int, seq uint8) {
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), seq
}

func (p *packetIO) flush() error { return p.bw.Flush() }

// releaseBuffers drops payload buffers that grew past keepBufferBytes.
func (p *packetIO) releaseBuffers() {
	if cap(p.rbuf) > keepBufferBytes {
		p.rbuf = nil
	}
	if p.racct > 0 && cap(p.rbuf) <= keepBufferBytes {
		p.acct.Release(p.racct)
		p.racct = 0
	}
	if cap(p.wbuf) > keepBufferBytes {
		p.wbuf = nil
	}
}
