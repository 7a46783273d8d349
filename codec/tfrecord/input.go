package tfrecord

import (
	"bytes"
	"io"
)

// The inputs of a zdecoder.

// peeker is what header and trailer parsing needs of an input.
type peeker interface {
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	ReadByte() (byte, error)
}

// memInput reads compressed bytes held in memory (the whole file, or the
// part of it a read needs), from a bytes.Reader that the flate decoder
// reads too. base is the bit offset in the file that b's first bit stands
// for.
type memInput struct {
	b    []byte
	r    *bytes.Reader
	base int64
}

func (m *memInput) reset(b []byte, off, base int64) {
	m.b, m.base = b, base
	if m.r == nil {
		m.r = bytes.NewReader(nil)
	}
	m.r.Reset(b)
	m.r.Seek(min(off, int64(len(b))), io.SeekStart)
}

// pos returns the offset in b of the next byte.
func (m *memInput) pos() int64 { return int64(len(m.b) - m.r.Len()) }

func (m *memInput) Peek(n int) ([]byte, error) {
	p := m.pos()
	rest := m.b[p:]
	if len(rest) < n {
		return rest, io.EOF
	}
	return rest[:n], nil
}

func (m *memInput) Discard(n int) (int, error) {
	k := min(n, m.r.Len())
	m.r.Seek(int64(k), io.SeekCurrent)
	if k < n {
		return k, io.EOF
	}
	return k, nil
}

func (m *memInput) ReadByte() (byte, error) { return m.r.ReadByte() }

// tap hands on a stream's bytes, counting them and keeping the last
// tapKeep of them in a ring when on, so that the indexing pass can try a
// candidate checkpoint against bytes it has already read.
type tap struct {
	r    io.Reader
	off  int64 // source offset of the next byte
	on   bool
	ring []byte
	err  error // the error r returned, if any
}

// tapKeep is how many recent bytes a tap keeps: a decoder's read-ahead
// plus the compressed bytes of a candidate's validation, with room.
const tapKeep = 256 << 10

func (t *tap) reset(r io.Reader, off int64) {
	t.r, t.off, t.err = r, off, nil
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil {
		t.err = err
	}
	if t.on && n > 0 {
		if t.ring == nil {
			t.ring = make([]byte, tapKeep)
		}
		b := p[:n]
		if len(b) > tapKeep {
			b = b[len(b)-tapKeep:]
		}
		at := int((t.off + int64(n-len(b))) % tapKeep)
		k := copy(t.ring[at:], b)
		copy(t.ring, b[k:])
	}
	t.off += int64(n)
	return n, err
}

// kept returns a copy of the bytes from offset at to the latest, nil if
// they are not all kept (or the tap keeps none).
func (t *tap) kept(at int64) []byte {
	if !t.on || t.ring == nil || at > t.off || t.off-at > tapKeep {
		return nil
	}
	out := make([]byte, t.off-at)
	i := int(at % tapKeep)
	k := copy(out, t.ring[i:])
	copy(out[k:], t.ring)
	return out
}

// counted counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
