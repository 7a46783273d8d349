package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/recordio"
)

// TestLostHeaderMount damages the header block of a zstd recordio file and
// mounts it: every body item is served byte for byte (the transformer found
// from the blocks), and .recfs lists the header block as damage.
func TestLostHeaderMount(t *testing.T) {
	needFUSE(t)
	recs := genRecords(14, 200, 3000)
	src := filepath.Join(t.TempDir(), "lost-header.rio")
	data := recfile.RIOBytes(t, recs, recordio.WriterOptions{Transformers: []string{"zstd"}, MaxItems: 20}, nil)
	data[28] ^= 0x20 // first payload byte of the header chunk
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}

	mnt := newMountDir(t)
	startMount(t, src, mnt, "--no-cache")
	for i, r := range recs {
		got, err := os.ReadFile(filepath.Join(mnt, recordName(int64(i), int64(len(recs)))))
		if err != nil || !bytes.Equal(got, r) {
			t.Fatalf("item %d: %d bytes, %v; want %d bytes", i, len(got), err, len(r))
		}
	}
	info := infoLines(t, filepath.Join(mnt, ".recfs"))
	if len(info["damage"]) != 1 || !bytes.HasPrefix([]byte(info["damage"][0]), []byte("offset=0 length=32768 ")) {
		t.Errorf(".recfs damage %q, want the header chunk", info["damage"])
	}
}

// TestStaleTailMount mounts the WAL of a running RocksDB/pebble database
// that reused an older log's file (log 7 written over log 6): the live
// records are served, and .recfs shows the old bytes as a stale tail, not
// as damage.
func TestStaleTailMount(t *testing.T) {
	needFUSE(t)
	old := genRecords(15, 60, 2000)
	var file []byte
	for _, r := range old {
		c := codectest.RecycledChunk(6, r)
		if room := 32768 - len(file)%32768; room < len(c) {
			file = append(file, make([]byte, room)...)
		}
		file = append(file, c...)
	}
	live := genRecords(16, 5, 500)
	var l []byte
	for _, r := range live {
		l = append(l, codectest.RecycledChunk(7, r)...)
	}
	copy(file, l)
	src := writeTemp(t, "000007.log", file)
	mnt := newMountDir(t)
	startMount(t, src, mnt, "--no-cache")
	for i, r := range live {
		got, err := os.ReadFile(filepath.Join(mnt, recordName(int64(i), int64(len(live)))))
		if err != nil || !bytes.Equal(got, r) {
			t.Fatalf("record %d: %d bytes, %v", i, len(got), err)
		}
	}
	info := infoLines(t, filepath.Join(mnt, ".recfs"))
	want := fmt.Sprintf("offset=%d length=%d ", len(l), len(file)-len(l))
	if info["records"][0] != fmt.Sprint(len(live)) || info["damaged ranges"][0] != "0" || len(info["damage"]) != 0 ||
		len(info["stale"]) != 1 || !strings.HasPrefix(info["stale"][0], want) {
		t.Errorf(".recfs: records %v, damaged ranges %v, damage %v, stale %v; want a stale tail %q",
			info["records"], info["damaged ranges"], info["damage"], info["stale"], want)
	}
}
