package recordio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/recfs/recfs/codec"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// ItemSource is an item to append given as a stream: Size bytes read from R.
type ItemSource struct {
	R    io.Reader
	Size int64
}

// AppendFrom appends items read from streams, each as a block of its own,
// like Append (durable on return, trailer kept, crash safe) but without
// holding an item in memory: an untransformed block is cut into chunks as
// the item is read, a transformed one is compressed into an anonymous
// temporary file first (its chunk count depends on the compressed size)
// and then cut from there. Memory stays at a few chunk buffers plus the
// compressor's window whatever the item size. If an input fails or ends
// early, the file is put back as it was.
//
// A transformed block may not decode to more than
// DefaultMaxBlockSize (readers refuse larger ones): larger items
// fail with ErrLimit before anything is written.
func (a *Appender) AppendFrom(items ...ItemSource) error {
	if err := a.usable(); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	for _, it := range items {
		if it.Size < 0 {
			return fmt.Errorf("codec: negative item size %d", it.Size)
		}
		raw := it.Size + int64(uvarintLen(1)+uvarintLen(uint64(it.Size)))
		if len(a.chain) > 0 && raw > DefaultMaxBlockSize {
			return fmt.Errorf("%w: a %d-byte item makes a compressed block larger than readers accept (%d bytes)", codec.ErrLimit, it.Size, int64(DefaultMaxBlockSize))
		}
	}
	if a.buf == nil {
		a.buf = make([]byte, rioChunkSize)
	}
	return a.write(func(at int64) (int64, error) {
		start := at
		for _, it := range items {
			n, err := a.writeItemBlock(at, it)
			if err != nil {
				return 0, err
			}
			at += n
		}
		return at - start, nil
	})
}

// writeItemBlock writes the block holding the one item it at file offset
// at and returns its length.
func (a *Appender) writeItemBlock(at int64, it ItemSource) (int64, error) {
	hdr := binary.AppendUvarint(binary.AppendUvarint(nil, 1), uint64(it.Size))
	raw := io.MultiReader(&sliceReader{b: hdr}, &exactReader{r: it.R, left: it.Size})
	rawLen := int64(len(hdr)) + it.Size
	if len(a.chain) == 0 {
		return writeRioBlockFrom(a.f, at, rioBodyMagic, raw, rawLen, a.buf)
	}
	tmp, err := os.CreateTemp("", "recfs-block-")
	if err != nil {
		return 0, err
	}
	defer tmp.Close()
	if err := os.Remove(tmp.Name()); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(tmp, rioChunkSize)
	stored, err := transformStream(a.chain, bw, raw, a.buf)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return 0, err
	}
	return writeRioBlockFrom(a.f, at, rioBodyMagic, io.NewSectionReader(tmp, 0, stored), stored, a.buf)
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
