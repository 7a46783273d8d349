package codectest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/klauspost/compress/flate"
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

// Redeflated returns the raw DEFLATE stream w deflated otherwise and
// padded with zeros to w's length (a DEFLATE reader stops at the final
// block): other bytes that decompress to the same output, as a planted
// copy of a checkpoint window could be. It fails t when no other level's
// output fits.
func Redeflated(t testing.TB, w []byte) []byte {
	t.Helper()
	plain, err := io.ReadAll(flate.NewReader(bytes.NewReader(w)))
	if err != nil {
		t.Fatal(err)
	}
	for level := flate.BestCompression; level > flate.BestSpeed; level-- {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, level)
		fw.Write(plain)
		fw.Close()
		if b.Len() <= len(w) && !bytes.Equal(b.Bytes(), w[:b.Len()]) {
			return append(b.Bytes(), make([]byte, len(w)-b.Len())...)
		}
	}
	t.Fatal("no other deflation of the window fits its length")
	return nil
}
