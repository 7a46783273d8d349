package nfs

import (
	"encoding/binary"
	"errors"
)

// errGarbage is the error of arguments that do not decode.
var errGarbage = errors.New("nfs: garbage arguments")

// xdrReader decodes XDR (RFC 4506) from a byte slice; the first error
// sticks.
type xdrReader struct {
	b   []byte
	err error
}

func (r *xdrReader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = errGarbage
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *xdrReader) u64() uint64 {
	hi := r.u32()
	return uint64(hi)<<32 | uint64(r.u32())
}

// opaque reads variable-length opaque data of at most max bytes.
func (r *xdrReader) opaque(max int) []byte {
	n := int(r.u32())
	if r.err != nil {
		return nil
	}
	pad := (4 - n%4) % 4
	if n > max || n+pad > len(r.b) {
		r.err = errGarbage
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n+pad:]
	return v
}

// fixed reads n bytes of fixed-length opaque data.
func (r *xdrReader) fixed(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errGarbage
		return nil
	}
	v := r.b[:n]
	r.b = r.b[(n+3)&^3:]
	return v
}

// xdrWriter encodes XDR into a growing byte slice.
type xdrWriter struct{ b []byte }

func (w *xdrWriter) u32(v uint32) { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *xdrWriter) u64(v uint64) { w.b = binary.BigEndian.AppendUint64(w.b, v) }

func (w *xdrWriter) bool(v bool) {
	if v {
		w.u32(1)
	} else {
		w.u32(0)
	}
}

// opaque writes variable-length opaque data (or a string).
func (w *xdrWriter) opaque(p []byte) {
	w.u32(uint32(len(p)))
	w.b = append(w.b, p...)
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
}

// Write appends p (for encoders that write to an io.Writer).
func (w *xdrWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
