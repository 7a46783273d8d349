package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestRWDirMountTornLog mounts, with --rw, a directory holding a leveldb
// log that a crashed writer left torn (a record cut short at the end). The
// mount serves its whole records, and an append through it moves the torn
// tail aside and lands after them, as the reference reader sees.
func TestRWDirMountTornLog(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		dir := t.TempDir()
		src := filepath.Join(dir, "torn.log")
		base := genRecords(11, 4, 200)
		recfile.WriteLog(t, src, append(append([][]byte(nil), base...), bytes.Repeat([]byte("T"), 70000)))
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(src, int64(len(b)-30000)); err != nil {
			t.Fatal(err)
		}
		mnt := newMountDir(t)
		t.Setenv("XDG_CACHE_HOME", t.TempDir()) // where the torn tail is saved
		m := startMount(t, dir, mnt, "--rw", "--no-cache", "--backend", backend)
		ents, err := os.ReadDir(filepath.Join(mnt, "torn.log"))
		if err != nil {
			t.Fatalf("list the torn log's records: %v", err)
		}
		var recs int
		for _, e := range ents {
			if !e.IsDir() && e.Name()[0] != '.' {
				recs++
			}
		}
		if recs != len(base) {
			t.Fatalf("%d records listed, want %d", recs, len(base))
		}
		got, err := os.ReadFile(filepath.Join(mnt, "torn.log", recordName(int64(len(base)-1), int64(len(base)))))
		if err != nil || !bytes.Equal(got, base[len(base)-1]) {
			t.Fatalf("last whole record: %v", err)
		}
		sh(t, "echo after-torn > "+filepath.Join(mnt, "torn.log", "new"))
		unmountAndWait(t, m)
		codectest.SamePayloads(t, "after the append", refLevelDB(t, src, false), append(base, []byte("after-torn\n")))
	})
}
