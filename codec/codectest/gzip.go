package codectest

import (
	"bytes"

	"github.com/klauspost/compress/gzip"
)

// Gzip returns b compressed as one GZIP member.
func Gzip(b []byte) []byte {
	return GzipFlushed([][]byte{b}, 1)
}

// GzipFlushed returns frames compressed as one GZIP member, with a sync
// flush after every every frames: how a writer that is still writing (a
// shard followed while it grows) leaves the stream.
func GzipFlushed(frames [][]byte, every int) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	for i, f := range frames {
		zw.Write(f)
		if (i+1)%every == 0 && i+1 < len(frames) {
			zw.Flush()
		}
	}
	zw.Close()
	return z.Bytes()
}
