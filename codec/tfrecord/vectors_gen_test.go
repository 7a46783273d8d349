package tfrecord

import (
	"bytes"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

var update = flag.Bool("update", false, "rewrite the crafted vectors in testdata/")

// frame encodes one record by hand, from the format's definition and the
// standard library's CRC-32C, independently of the package's writer;
// mutate may damage its bytes.
func frame(data string, mutate func(b []byte)) []byte {
	tab := crc32.MakeTable(crc32.Castagnoli)
	mask := func(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }
	b := make([]byte, 12, 16+len(data))
	binary.LittleEndian.PutUint64(b, uint64(len(data)))
	binary.LittleEndian.PutUint32(b[8:], mask(crc32.Checksum(b[:8], tab)))
	b = append(b, data...)
	b = binary.LittleEndian.AppendUint32(b, mask(crc32.Checksum([]byte(data), tab)))
	if mutate != nil {
		mutate(b)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// craftedVectors returns the bytes of every file in testdata/.
func craftedVectors() map[string][]byte {
	flipLenCRC := func(b []byte) { b[9] ^= 0x40 }
	flipDataCRC := func(b []byte) { b[len(b)-2] ^= 0x01 }
	flipData := func(b []byte) { b[13] ^= 0x80 }
	flipLen := func(b []byte) { b[0] ^= 0x04 }
	garbage := bytes.Repeat([]byte("\x00junk\xff"), 17)
	plain := cat(frame("one", nil), frame("", nil), frame("three", nil))
	var gz, zl bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(plain)
	gw.Close()
	zw := zlib.NewWriter(&zl)
	zw.Write(plain)
	zw.Close()
	return map[string][]byte{
		"empty.tfrecord":            {},
		"zero_length.tfrecord":      cat(frame("", nil), frame("abc", nil)),
		"only_zero_length.tfrecord": frame("", nil),
		"bad_length_crc.tfrecord":   cat(frame("one", nil), frame("two", flipLenCRC), frame("three", nil)),
		"bad_length.tfrecord":       cat(frame("one", nil), frame("two", flipLen), frame("three", nil)),
		"bad_data_crc.tfrecord":     cat(frame("one", nil), frame("two", flipDataCRC), frame("three", nil)),
		"bad_data.tfrecord":         cat(frame("one", nil), frame("twotwo", flipData), frame("three", nil)),
		"truncated_tail.tfrecord":   cat(frame("one", nil), frame("two", nil), frame("three", nil)[:14]),
		"truncated_header.tfrecord": cat(frame("one", nil), frame("two", nil)[:5]),
		"truncated_crc.tfrecord":    cat(frame("one", nil), frame("two", nil)[:18]),
		"garbage_between.tfrecord":  cat(frame("one", nil), garbage, frame("two", nil)),
		"garbage_head.tfrecord":     cat(garbage, frame("one", nil), frame("two", nil)),
		"plain.tfrecord.gz":         gz.Bytes(),
		"plain.tfrecord.zz":         zl.Bytes(),
	}
}

func TestGenerateVectors(t *testing.T) {
	t.Parallel()
	if !*update {
		t.Skip("run with -update to rewrite testdata/")
	}
	for name, b := range craftedVectors() {
		if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVectorsAreCrafted checks that testdata/ holds exactly what the
// crafting code says (so the table below describes the files on disk).
func TestVectorsAreCrafted(t *testing.T) {
	t.Parallel()
	for name, want := range craftedVectors() {
		if filepath.Ext(name) == ".gz" || filepath.Ext(name) == ".zz" {
			continue // compressor output may change between versions; the table checks their content
		}
		got, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its crafting code; run go test -run TestGenerateVectors -update", name)
		}
	}
}
