package interop

import (
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// TestLeveldbUnknownChunkType puts a chunk of an unknown type with a valid
// checksum between records of one block. leveldb C++ (log_reader.cc, the
// default case of ReadRecord) reports "unknown record type" and goes on with
// the next chunk, so it returns every other record; recfs must too. The
// other references lose more: goleveldb reports "invalid chunk type" and
// drops the rest of the block, pebble v2 stops with an error.
func TestLeveldbUnknownChunkType(t *testing.T) {
	recs := [][]byte{payload(0, 300), payload(1, 500), payload(2, 700)}
	b, err := writeGoleveldb(recs[:1])
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, codectest.LogChunk(0x42, payload(9, 40))...)
	for _, r := range recs[1:] {
		b = append(b, codectest.LogChunk(1, r)...)
	}

	got := recfsReadLog(b, nil)
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	if d := diffRecords(recs, got.Recs); d != "" {
		t.Errorf("recfs: %s", d)
	}
	if len(got.Damage) != 1 || got.Damage[0].Off != 307 || got.Damage[0].Len != 47 || got.Damage[0].Reason != "unknown chunk type" {
		t.Errorf("recfs damage %v, want the 47-byte chunk at 307", got.Damage)
	}

	g, drops, err := readGoleveldb(b)
	if err != nil || diffRecords(recs[:1], g) != "" || len(drops) != 1 || !strings.Contains(drops[0], "invalid chunk type") {
		t.Errorf("goleveldb: %d records, drops %q, %v; want the first record and one invalid-chunk-type drop", len(g), drops, err)
	}
	p, err := readPebble(b)
	if err == nil || diffRecords(recs[:1], p) != "" {
		t.Errorf("pebble: %d records, %v; want the first record, then an error", len(p), err)
	}
}

// TestLeveldbFirstLastSameBlock is the FuzzLogScan input of 114 bytes (the
// repro file first_last_same_block): an empty FIRST and its LAST in the same
// block. Every reader returns one record of the LAST's payload, as recfs
// does; FuzzLogScan's property wrongly wanted chunks in distinct blocks.
func TestLeveldbFirstLastSameBlock(t *testing.T) {
	p := []byte(strings.Repeat("x", 100))
	b := append(codectest.LogChunk(2, nil), codectest.LogChunk(4, p)...)
	if len(b) != 114 {
		t.Fatalf("%d bytes", len(b))
	}
	want := [][]byte{p}
	got := recfsReadLog(b, nil)
	if d := diffRecords(want, got.Recs); d != "" || got.Err != nil || len(got.Damage) != 0 {
		t.Errorf("recfs: %s %v %v", d, got.Err, got.Damage)
	}
	g, drops, err := readGoleveldb(b)
	if d := diffRecords(want, g); d != "" || err != nil || len(drops) != 0 {
		t.Errorf("goleveldb: %s %v %v", d, err, drops)
	}
	pr, err := readPebble(b)
	if d := diffRecords(want, pr); d != "" || err != nil {
		t.Errorf("pebble: %s %v", d, err)
	}
}
