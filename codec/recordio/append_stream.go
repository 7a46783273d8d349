package recordio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// ItemSource is an item to append given as a stream: Size bytes read from R.
type ItemSource struct {
	R    io.Reader
	Size int64
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// transformStream compresses raw through the chain (first transformer
// applied first) into out and returns the stored length.
func transformStream(chain []rioTransformer, out io.Writer, raw io.Reader, buf []byte) (int64, error) {
	cw := &countWriter{w: out}
	var w io.Writer = cw
	var closers []io.Closer // innermost (last applied) first
	for i := len(chain) - 1; i >= 0; i-- {
		t := chain[i]
		switch t.name {
		case "flate":
			fw, err := flate.NewWriter(w, t.level)
			if err != nil {
				return 0, err
			}
			w = fw
			closers = append(closers, fw)
		case "zstd":
			level := t.level
			if level < 0 {
				level = 5 // the reference's default
			}
			zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
				zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
			if err != nil {
				return 0, err
			}
			w = zw
			closers = append(closers, zw)
		default:
			return 0, fmt.Errorf("%w: recordio transformer %q not found", codec.ErrUnsupported, t.spec)
		}
	}
	_, err := io.CopyBuffer(w, raw, buf)
	// Close the outermost writer (the first transformer) first, so each
	// flushes into the next.
	for i := len(closers) - 1; i >= 0; i-- {
		if cerr := closers[i].Close(); err == nil {
			err = cerr
		}
	}
	return cw.n, err
}

// writeRioBlockFrom writes one block of chunks whose stored bytes, n of
// them, are read from r, at offset at of w, using buf (32768 bytes); it
// returns the bytes written.
func writeRioBlockFrom(w io.WriterAt, at int64, magic [8]byte, r io.Reader, n int64, buf []byte) (int64, error) {
	total := (n-1)/rioMaxChunkPayload + 1
	if n == 0 {
		total = 1
	}
	if total > 1<<32-1 {
		return 0, fmt.Errorf("%w: block of %d bytes needs too many chunks", codec.ErrLimit, n)
	}
	for i := int64(0); i < total; i++ {
		k := min(n-i*rioMaxChunkPayload, rioMaxChunkPayload)
		c := buf[:rioChunkSize]
		if _, err := io.ReadFull(r, c[rioChunkHeader:rioChunkHeader+k]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = codec.ErrShortInput
			}
			return 0, err
		}
		copy(c, magic[:])
		binary.LittleEndian.PutUint32(c[12:], 0)
		binary.LittleEndian.PutUint32(c[16:], uint32(k))
		binary.LittleEndian.PutUint32(c[20:], uint32(total))
		binary.LittleEndian.PutUint32(c[24:], uint32(i))
		pad := c[rioChunkHeader+k:]
		for j := range pad {
			pad[j] = rioPadding[j&3]
		}
		binary.LittleEndian.PutUint32(c[8:], crcIEEE(c[12:rioChunkHeader+k]))
		if _, err := w.WriteAt(c, at+i*rioChunkSize); err != nil {
			return 0, err
		}
	}
	return total * rioChunkSize, nil
}

// sliceReader reads a byte slice (a bytes.Reader without the Bytes method
// some decoders look for).
type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// exactReader reads exactly left bytes from r: fewer is ErrShortInput.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF {
		if e.left > 0 {
			return n, codec.ErrShortInput
		}
		err = nil
	}
	return n, err
}
