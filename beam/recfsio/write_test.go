package recfsio

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// tfrecordRecords parses a TFRecord file as TensorFlow's reader does,
// written here from the format's definition (u64 length, masked CRC-32C of
// the length, data, masked CRC-32C of the data) rather than with recfs's
// codec, and fails the test on any mismatch.
func tfrecordRecords(t *testing.T, b []byte) [][]byte {
	t.Helper()
	tab := crc32.MakeTable(crc32.Castagnoli)
	mask := func(p []byte) uint32 {
		c := crc32.Checksum(p, tab)
		return (c>>15 | c<<17) + 0xa282ead8
	}
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 12 {
			t.Fatalf("%d stray bytes at the end", len(b))
		}
		n := binary.LittleEndian.Uint64(b)
		if mask(b[:8]) != binary.LittleEndian.Uint32(b[8:]) {
			t.Fatal("length checksum mismatch")
		}
		if uint64(len(b)-16) < n {
			t.Fatal("truncated record")
		}
		data := b[12 : 12+n]
		if mask(data) != binary.LittleEndian.Uint32(b[12+n:]) {
			t.Fatal("data checksum mismatch")
		}
		out = append(out, data)
		b = b[16+n:]
	}
	return out
}

// TestWriteTFRecord writes records read from leveldb logs as a TFRecord
// file and as a leveldb log: a reader written from the TFRecord format's
// definition gets the same records, and so does recfsio.Read of the log.
func TestWriteTFRecord(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	recs := payloads("sink", 500, 900)
	writeFile(t, dir, "in.log", leveldbBytes(t, recs))
	tfr, ldb := filepath.Join(out, "out.tfrecord"), filepath.Join(out, "out.log")

	p, s := beam.NewPipelineWithRoot()
	col := Read(s, filepath.Join(dir, "in.log"), Options{CacheDir: t.TempDir(), SplitBytes: 16 << 10})
	WriteTFRecord(s, tfr, col)
	WriteLeveldbLog(s, ldb, col)
	run(t, p)

	b, err := os.ReadFile(tfr)
	if err != nil {
		t.Fatal(err)
	}
	got := tfrecordRecords(t, b)
	want := slices.Clone(recs)
	cmp := func(a, b []byte) int { return slices.Compare(a, b) }
	slices.SortFunc(got, cmp)
	slices.SortFunc(want, cmp)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the TFRecord file holds %d records, want the %d written", len(got), len(want))
	}
	back, _ := want2(t, ldb)
	slices.SortFunc(back, cmp)
	if !slices.EqualFunc(back, want, slices.Equal) {
		t.Errorf("the leveldb log holds %d records, want the %d written", len(back), len(want))
	}
	if m, _ := filepath.Glob(filepath.Join(out, ".*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
