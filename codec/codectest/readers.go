package codectest

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
)

// Sources that watch or break the reads of the code under test.

// ErrInjected is what a CountingReader's reads past FailAt fail with.
var ErrInjected = errors.New("codectest: injected read failure")

// CountingReader counts the reads that reach R, and fails those that reach
// past FailAt when it is set: for tests that count what a scan reads, or
// make it meet a source failing midway. It is safe for concurrent use.
type CountingReader struct {
	R      io.ReaderAt
	FailAt int64        // > 0: reads that reach past it fail with ErrInjected
	Reads  atomic.Int64 // ReadAt calls that reached R
	Bytes  atomic.Int64 // bytes those calls asked for
}

// Counting returns a CountingReader over b.
func Counting(b []byte) *CountingReader { return &CountingReader{R: bytes.NewReader(b)} }

// ReadAt reads from R and counts the call, or fails past FailAt.
func (c *CountingReader) ReadAt(p []byte, off int64) (int, error) {
	if c.FailAt > 0 && off+int64(len(p)) > c.FailAt {
		return 0, ErrInjected
	}
	c.Reads.Add(1)
	c.Bytes.Add(int64(len(p)))
	return c.R.ReadAt(p, off)
}

// ErrReadLimit is what a ReadLimit fails with once its limit has passed.
var ErrReadLimit = errors.New("codectest: read limit passed")

// ReadLimit counts the bytes read through it (Read) and fails with
// ErrReadLimit once they pass Limit, so a test of a scan that would read
// quadratically ends quickly.
type ReadLimit struct {
	R     io.ReaderAt
	Read  int64
	Limit int64
}

// ReadAt counts len(p) and reads from R, or fails past the limit.
func (c *ReadLimit) ReadAt(p []byte, off int64) (int, error) {
	c.Read += int64(len(p))
	if c.Read > c.Limit {
		return 0, ErrReadLimit
	}
	return c.R.ReadAt(p, off)
}
