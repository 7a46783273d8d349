package codectest

import (
	"bytes"
	"math/rand/v2"
	"strconv"

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

// Text returns size bytes of words and random numbers from rng: data that
// compresses about threefold, as tf.Example protos of tokens and ids do.
func Text(rng *rand.Rand, size int) []byte {
	words := []string{"image/encoded", "label", "feature", "int64_list", "bytes_list", "float_list", "the", "of", "and"}
	b := make([]byte, 0, size+32)
	for len(b) < size {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(rng.IntN(1<<20)), 10)
		b = append(b, ' ')
	}
	return b[:size]
}
