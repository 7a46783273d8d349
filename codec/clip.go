package codec

import (
	"fmt"
	"io"
)

// ClipRead checks a read of p at off from a record of size bytes the way
// io.ReaderAt reads go, and returns the part of p the record can fill. ok
// is false when there is nothing to read; err is then what the read
// returns: nil for an empty read at the end of the record, io.EOF past it,
// an error for a negative offset.
func ClipRead(p []byte, off, size int64) (want []byte, ok bool, err error) {
	switch {
	case off < 0:
		return nil, false, fmt.Errorf("codec: read at negative offset %d", off)
	case off >= size:
		if len(p) == 0 && off == size {
			return nil, false, nil
		}
		return nil, false, io.EOF
	}
	return p[:min(int64(len(p)), size-off)], true, nil
}

// ShortRead returns io.EOF when a read filled fewer than want bytes of
// the buffer a caller asked for (n < want) and nil otherwise, as
// io.ReaderAt reports a read that runs past the end.
func ShortRead(n, want int) error {
	if n < want {
		return io.EOF
	}
	return nil
}
