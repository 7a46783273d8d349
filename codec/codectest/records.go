package codectest

import (
	"bytes"
	"io"
	"math/rand"
	"os"
	"testing"

	"github.com/sirupsen/logrus"
)

// Records returns n records of about size bytes (size + i%7), record i
// filled with the byte tag+i.
func Records(n, size int, tag byte) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, bytes.Repeat([]byte{tag + byte(i)}, size+i%7))
	}
	return out
}

// FlipByte inverts one byte of the file at path, in place.
func FlipByte(t testing.TB, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b[:], off); err != nil {
		t.Fatal(err)
	}
}

// QuietLogger returns a logger that discards what it is given.
func QuietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// GenItems returns n random items whose sizes cluster around the edges of
// chunks of payload bytes (0, 1, 2, payload±k, 2×payload …), a third of
// them of any size below 3×payload.
func GenItems(rng *rand.Rand, n, payload int) [][]byte {
	p := payload
	sizes := []int{0, 1, 2, p - 5, p - 4, p - 3, p, p + 1, 2*p - 4, 2 * p, 100, 1000}
	out := make([][]byte, n)
	for i := range out {
		sz := sizes[rng.Intn(len(sizes))]
		if rng.Intn(3) == 0 {
			sz = rng.Intn(3 * p)
		}
		b := make([]byte, sz)
		rng.Read(b)
		out[i] = b
	}
	return out
}
