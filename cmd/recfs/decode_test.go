package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/decoders"
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
// record order, also with selections; --number labels every line; a
// record the decoder does not fit stops cat with exit 1 after the records
// before it; auto picks by content.
func TestCatDecode(t *testing.T) {
	path := writeTestLog(t, []string{testBatch(1, "a", "b"), testBatch(3, "user00042"), "junk"})
	want := []string{
		"batch seq 1 count 2\nput a v a\ndelete b\n",
		"batch seq 3 count 1\nput user00042 v user00042\n",
	}
	r := recfs(t, "cat", "--decode", "batch", path)
	if r.code != 1 || r.stdout != want[0]+want[1] || !strings.Contains(r.stderr, "decode batch: record 2 at byte 0: short batch header") {
		t.Errorf("cat --decode batch: exit %d\n%s\nstderr %s\nwant exit 1 after:\n%s", r.code, r.stdout, r.stderr, want[0]+want[1])
	}
	good := writeTestLog(t, []string{testBatch(1, "a", "b"), testBatch(3, "user00042")})
	if got := mustRun(t, "cat", "--decode", "auto", good, "1"); got != want[1] {
		t.Errorf("cat --decode auto 1: %q, want %q", got, want[1])
	}
	if r := recfs(t, "cat", "--decode", "auto", path); r.code != 2 || !strings.Contains(r.stderr, "no decoder fits the first 3 records") {
		t.Errorf("cat --decode auto of a WAL with junk: exit %d, stderr %q", r.code, r.stderr)
	}
	// Tag 19 with two strings: a pebble range-key delete; to RocksDB a
	// begin-unprepare marker followed by bytes that are no operation.
	rk := testBatch(5)[:8] + "\x01\x00\x00\x00\x13\x01a\x01b"
	rkPath := writeTestLog(t, []string{rk})
	if got := mustRun(t, "cat", "--decode", "batch-pebble", rkPath); got != "batch seq 5 count 1\nrange-key-delete a b\n" {
		t.Errorf("batch-pebble: %q", got)
	}
	if r := recfs(t, "cat", "--decode", "batch-rocksdb", rkPath); r.code != 1 || !strings.Contains(r.stderr, "truncated put") {
		t.Errorf("batch-rocksdb: exit %d, %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if got, want := mustRun(t, "cat", "--decode", "batch", "--number", path, "0-1"),
		"000000\tseq=1\tbatch seq 1 count 2\n000000\tseq=1\tput a v a\n000000\tseq=2\tdelete b\n000001\tseq=3\tbatch seq 3 count 1\n000001\tseq=3\tput user00042 v user00042\n"; got != want {
		t.Errorf("cat --decode --number:\n%s\nwant:\n%s", got, want)
	}
	if got, want := mustRun(t, "cat", "--decode", "batch", "--json", path, "1"),
		`{"n":1,"seq":3,"op":"batch","count":1}`+"\n"+`{"n":1,"seq":3,"op":"put","key":"user00042","value":"v user00042"}`+"\n"; got != want {
		t.Errorf("cat --decode --number:\n%s\nwant:\n%s", got, want)
	}
	// A WAL under a name that says nothing: auto goes by content.
	renamed := filepath.Join(filepath.Dir(good), "wal-backup.bin")
	if err := os.Rename(good, renamed); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, "cat", "--decode", "auto", renamed, "0"); got != want[0] {
		t.Errorf("cat --decode auto of wal-backup.bin: %q, want %q", got, want[0])
	}
	if got := mustRun(t, "info", "--decode", "auto", renamed); !strings.Contains(got, "decode:   batch (auto: the first 2 records are batch records)\n") {
		t.Errorf("info --decode auto:\n%s", got)
	}
	if got := mustRun(t, "info", "--json", "--decode", "auto", path); !strings.Contains(got, `"decode": "raw",`) ||
		!strings.Contains(got, `"decode_why": "auto: raw: no decoder fits the first 3 records"`) {
		t.Errorf("info --json --decode auto of a WAL with junk:\n%s", got)
	}
	if got := mustRun(t, "info", "--json", path); strings.Contains(got, `"decode"`) {
		t.Errorf("info without --decode says decode:\n%s", got)
	}
	manifest := filepath.Join(filepath.Dir(path), "MANIFEST-000001")
	if err := os.Rename(path, manifest); err != nil {
		t.Fatal(err)
	}
	// "junk" as a VersionEdit: tag 106 (a removed backing table) with
	// file number 117 ('u'), then tag 110 ('n'), which nobody defines.
	if r := recfs(t, "cat", "--decode", "manifest", manifest, "2"); r.code != 1 || !strings.Contains(r.stderr, "unknown manifest tag 110") {
		t.Errorf("cat --decode manifest of junk: exit %d, %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, bad := range [][]string{
		{"cat", "--decode", "wal", manifest},
		{"cat", "--decode", "batch:x", manifest},
		{"cat", "--decode", "batch", "--trailer", manifest},
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

// uv is a varint; str a length-prefixed string.
func uv(v uint64) string     { return string(binary.AppendUvarint(nil, v)) }
func str(s string) string    { return uv(uint64(len(s))) + s }
func ikey(k string) string   { return str(k + "\x01\x01\x00\x00\x00\x00\x00\x00") }
func putCF(cf uint64) string { return "\x05" + uv(cf) + str("k") + str("v w") }

// TestCatDecodeColumnFamilies: a WAL's column families show by the name
// the MANIFEST beside it gives (CURRENT names it), or the one --manifest
// gives; cat --decode manifest ends with the live state.
func TestCatDecodeColumnFamilies(t *testing.T) {
	dir := t.TempDir()
	wal := writeTestLog(t, []string{testBatch(7)[:8] + "\x02\x00\x00\x00" + putCF(1) + putCF(9)})
	edits := []string{
		"\x01" + str("leveldb.BytewiseComparator") + "\x02\x05\x03\x09",
		"\xc9\x01" + str("user data") + "\xc8\x01\x01",              // add-column-family, column-family 1
		"\x07\x00\x08\x64" + ikey("a") + ikey("m") + "\xc8\x01\x01", // add-file L0 8 to family 1
	}
	manifest := filepath.Join(filepath.Dir(wal), "MANIFEST-000003")
	recfile.WriteLog(t, manifest, [][]byte{[]byte(edits[0]), []byte(edits[1]), []byte(edits[2])})
	if err := os.WriteFile(filepath.Join(filepath.Dir(wal), "CURRENT"), []byte("MANIFEST-000003\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "batch seq 7 count 2\nput-cf user\\x20data k v w\nput-cf 9 k v w\n"
	if got := mustRun(t, "cat", "--decode", "batch", wal); got != want {
		t.Errorf("beside:\n%s\nwant:\n%s", got, want)
	}
	lone := filepath.Join(dir, "000042.log")
	if err := os.Rename(wal, lone); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, "cat", "--decode", "batch", lone); got != strings.ReplaceAll(want, "user\\x20data", "1") {
		t.Errorf("alone:\n%s", got)
	}
	if got := mustRun(t, "cat", "--decode", "batch", "--manifest", manifest, lone); got != want {
		t.Errorf("--manifest:\n%s\nwant:\n%s", got, want)
	}
	if r := recfs(t, "cat", "--decode", "batch", "--manifest", filepath.Join(dir, "none"), lone); r.code == 0 {
		t.Errorf("--manifest of a missing file: exit 0")
	}
	got := mustRun(t, "cat", "--decode", "manifest", manifest)
	for _, l := range []string{"add-column-family user data\n", "add-file L0 000008 size=100 smallest=a#1,SET largest=m#1,SET\n",
		"live edits=3\n", "live next-file=000009\n", "live column-family=1 name=user data\n",
		"live cf=user\\x20data L0 000008 size=100 smallest=a#1,SET largest=m#1,SET\n"} {
		if !strings.Contains(got, l) {
			t.Errorf("cat --decode manifest lacks %q:\n%s", l, got)
		}
	}
	if got := mustRun(t, "cat", "--decode", "manifest", manifest, "0"); strings.Contains(got, "live") {
		t.Errorf("a selection ends with the live state:\n%s", got)
	}
}

// TestHelpListsDecoders: recfs --help, cat --help and mount --help name
// every decoder of the registry.
func TestHelpListsDecoders(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"cat", "--help"}, {"mount", "--help"}} {
		out := mustRun(t, args...)
		for _, name := range decoders.Names() {
			if !strings.Contains(out, "  "+name) {
				t.Errorf("recfs %s does not list %s:\n%s", strings.Join(args, " "), name, out)
			}
		}
	}
}

// TestCatDecodeProtobuf: --decode protobuf:MESSAGE with a .proto given by a
// relative path and an import path, and without a schema.
func TestCatDecodeProtobuf(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"shop.proto", "item.proto"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "codec", "pbdecode", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// id "o-1", count 2, items [{sku "tea"}]
	order := "\x0a\x03o-1\x10\x02\x8a\x01\x05\x0a\x03tea"
	path := writeTestLog(t, []string{order})
	t.Chdir(dir)
	if got, want := mustRun(t, "cat", "--decode", "protobuf:Order", "--proto", "shop.proto", "--proto-path", ".", path),
		`{"id": "o-1", "count": 2, "items": [{"sku": "tea"}]}`+"\n"; got != want {
		t.Errorf("by schema: %q, want %q", got, want)
	}
	if got, want := mustRun(t, "cat", "--decode", "protobuf", path), "1: \"o-1\"\n2: 2\n17 {\n  1: \"tea\"\n}\n"; got != want {
		t.Errorf("schemaless: %q, want %q", got, want)
	}
	for _, bad := range [][]string{
		{"cat", "--decode", "protobuf:Nope", "--proto", "shop.proto", path},
		{"cat", "--decode", "protobuf:Order", path},
		{"cat", "--decode", "protobuf", "--proto", "shop.proto", path},
	} {
		if r := recfs(t, bad...); r.code == 0 {
			t.Errorf("recfs %q: exit 0", bad)
		}
	}
}
