package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestLostHeaderMount damages the header block of a zstd recordio file and
// mounts it: every body item is served byte for byte (the transformer found
// from the blocks), and .recfs lists the header block as damage.
func TestLostHeaderMount(t *testing.T) {
	needFUSE(t)
	recs := genRecords(14, 200, 3000)
	src := filepath.Join(t.TempDir(), "lost-header.rio")
	var buf bytes.Buffer
	w, err := codec.NewRecordIOWriter(&buf, codec.RecordIOWriterOptions{Transformers: []string{"zstd"}, MaxItems: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
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
