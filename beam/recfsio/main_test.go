package recfsio

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/index"
)

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "prism")
}

// payloads returns n records of varied sizes whose bytes name seed and k.
func payloads(seed string, n, size int) [][]byte {
	out := make([][]byte, n)
	for k := range out {
		p := fmt.Appendf(nil, "%s/%d:", seed, k)
		for len(p) < size/2+k*37%size {
			p = append(p, byte('a'+k%26), 0, 0xff)
		}
		out[k] = p
	}
	return out
}

// tfrecordBytes returns recs as a TFRecord file.
func tfrecordBytes(t *testing.T, recs [][]byte) []byte {
	var b bytes.Buffer
	return fileBytes(t, &b, tfrecord.NewWriter(&b, tfrecord.WriterOptions{}), recs)
}

// fileBytes writes recs with w, which writes to b, and returns b's bytes.
func fileBytes(t *testing.T, b *bytes.Buffer, w recordWriter, recs [][]byte) []byte {
	t.Helper()
	for _, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gzipBytes returns b gzip-compressed.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// leveldbBytes returns recs as a leveldb log.
func leveldbBytes(t *testing.T, recs [][]byte) []byte {
	var b bytes.Buffer
	return fileBytes(t, &b, leveldb.NewWriter(&b, leveldb.WriterOptions{}), recs)
}

// writeFile writes b as dir/name and returns its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// want returns what `recfs cat` gives for each file (a fresh scan that
// skips damage), as the keys ReadWithMeta's output is compared by, and the
// damage regions.
func want(t *testing.T, paths ...string) (keys []string, damage int) {
	t.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		tb, err := index.Build(context.Background(), f, fi.Size(), index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for n := range tb.Len() {
			b := make([]byte, tb.Size(n))
			if _, err := tb.ReadAt(n, b, 0); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, key(p, n, tb.Offset(n), b))
		}
		damage += len(tb.Damage())
		tb.Close()
		f.Close()
	}
	sort.Strings(keys)
	return keys, damage
}

// want2 returns the payloads of the file at path as a fresh scan gives
// them, and its damage regions.
func want2(t *testing.T, path string) ([][]byte, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	tb, err := index.Build(context.Background(), f, fi.Size(), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var out [][]byte
	for n := range tb.Len() {
		b := make([]byte, tb.Size(n))
		if _, err := tb.ReadAt(n, b, 0); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out, len(tb.Damage())
}

func key(file string, n, off int64, p []byte) string {
	return fmt.Sprintf("%s:%d@%d:%q", file, n, off, p)
}

func init() {
	beam.RegisterFunction(recordKey)
}

// recordKey renders a Record as want's keys.
func recordKey(r Record) string { return key(r.File, r.N, r.Offset, r.Payload) }

// run runs the pipeline on prism and returns its summary.
func run(t *testing.T, p *beam.Pipeline) Summary {
	t.Helper()
	r, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	return SummaryOf(r)
}
