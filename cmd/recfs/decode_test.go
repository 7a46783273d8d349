package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testBatch builds a WriteBatch of puts (even i) and deletes (odd i).
func testBatch(seq uint64, keys ...string) string {
	b := binary.LittleEndian.AppendUint64(nil, seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
	for i, k := range keys {
		if i%2 == 0 {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.AppendUvarint(b, uint64(len(k)+2))
			b = append(b, "v "+k...)
		} else {
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
		}
	}
	return string(b)
}

// TestCatDecode: cat --decode batch writes one text per WriteBatch, in
// record order, also with selections and --number; auto picks by name.
func TestCatDecode(t *testing.T) {
	path := writeTestLog(t, []string{testBatch(1, "a", "b"), testBatch(3, "user00042"), "junk"})
	want := []string{
		"batch seq 1 count 2\nput a v\\x20a\ndelete b\n",
		"batch seq 3 count 1\nput user00042 v\\x20user00042\n",
		"error: batch header needs 12 bytes at byte 0: 6a756e6b\n",
	}
	if got := mustRun(t, "cat", "--decode", "batch", path); got != strings.Join(want, "") {
		t.Errorf("cat --decode batch:\n%s\nwant:\n%s", got, strings.Join(want, ""))
	}
	if got := mustRun(t, "cat", "--decode", "auto", path, "1"); got != want[1] {
		t.Errorf("cat --decode auto 1: %q, want %q", got, want[1])
	}
	// Tag 19 with two strings: a pebble range-key delete; to RocksDB a
	// begin-unprepare marker followed by bytes that are no operation.
	rk := testBatch(5)[:8] + "\x01\x00\x00\x00\x13\x01a\x01b"
	rkPath := writeTestLog(t, []string{rk})
	if got := mustRun(t, "cat", "--decode", "batch-pebble", rkPath); got != "batch seq 5 count 1\nrange-key-delete a b\n" {
		t.Errorf("batch-pebble: %q", got)
	}
	if got := mustRun(t, "cat", "--decode", "batch-rocksdb", rkPath); got != "batch seq 5 count 1\nbegin-unprepare\nerror: truncated put at byte 13: 01610162\n" {
		t.Errorf("batch-rocksdb: %q", got)
	}
	if got := mustRun(t, "cat", "--decode", "batch", "--number", path, "0-1"); got != recordNumber(0, 3)+"\t"+want[0]+recordNumber(1, 3)+"\t"+want[1] {
		t.Errorf("cat --decode --number: %q", got)
	}
	manifest := filepath.Join(filepath.Dir(path), "MANIFEST-000001")
	if err := os.Rename(path, manifest); err != nil {
		t.Fatal(err)
	}
	// "junk" as a VersionEdit: tag 106 (a removed backing table) with
	// file number 117 ('u'), then tag 110 ('n'), which nobody defines.
	if got := mustRun(t, "cat", "--decode", "auto", manifest, "2"); got != "delete-backing 117\nunknown-tag 110 at byte 2: 6e6b\n" {
		t.Errorf("cat --decode auto of a MANIFEST: %q", got)
	}
	for _, bad := range [][]string{
		{"cat", "--decode", "wal", manifest},
		{"cat", "--decode", "batch", "--json", manifest},
		{"cat", "--decode", "auto", vecless(t)},
		{"mount", "--decode", "batch", "--rw", manifest, t.TempDir()},
		{"mount", "--decode", "all", manifest, t.TempDir()},
	} {
		if r := recfs(t, bad...); r.code != 2 {
			t.Errorf("recfs %q: exit %d, want 2 (usage); stderr %s", bad, r.code, r.stderr)
		}
	}
}

// vecless returns a record file whose name says nothing of its content.
func vecless(t *testing.T) string {
	p := writeTestLog(t, []string{"x"})
	q := filepath.Join(filepath.Dir(p), "data.bin")
	if err := os.Rename(p, q); err != nil {
		t.Fatal(err)
	}
	return q
}

// BenchmarkCatDecode: cat --decode batch of a WAL of 10000 batches of one
// to four puts and deletes (16-byte keys, 100-byte values); bytes are the
// WAL's.
func BenchmarkCatDecode(b *testing.B) {
	recs := make([]string, 10000)
	for i := range recs {
		keys := make([]string, 1+i%4)
		for j := range keys {
			keys[j] = fmt.Sprintf("user%012d", i*4+j) + strings.Repeat("v", 84*(j%2)) // puts' values are "v "+key
		}
		recs[i] = testBatch(uint64(i*4+1), keys...)
	}
	path := writeTestLog(b, recs)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	var out, errb bytes.Buffer
	for b.Loop() {
		out.Reset()
		if code := run(b.Context(), []string{"cat", "--decode", "batch", path}, &out, &errb); code != 0 {
			b.Fatal(errb.String())
		}
	}
}
