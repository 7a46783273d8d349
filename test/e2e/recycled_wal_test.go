package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// quietPebble keeps pebble's log lines out of the test output.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)      {}
func (quietPebble) Errorf(string, ...any)     {}
func (quietPebble) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

// TestRecycledWALNoWriteYet: pebble keeps the file of a WAL it has flushed
// to reuse for a later log, renaming it to the new log's name. A crash after
// the rename, before any write of the new log reached the file, leaves the
// old log's bytes, intact, under the new name; pebble's recovery reads the
// file as the new log and finds nothing in it. recfs cat prints nothing for
// it, and a mount shows no record and the whole file as a stale tail; under
// its own name the same bytes are the old log's records.
func TestRecycledWALNoWriteYet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := pebble.Open(dir, &pebble.Options{MemTableSize: 32 << 20, DisableAutomaticCompactions: true, Logger: quietPebble{}})
	if err != nil {
		t.Fatal(err)
	}
	for f := range 3 {
		for i := range 20 {
			if err := db.Set([]byte(fmt.Sprintf("key%d-%03d", f, i)), []byte(strings.Repeat("v", 100+i)), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(logs)
	if len(logs) < 2 {
		t.Fatalf("pebble kept no flushed WAL for reuse: %v", logs)
	}
	old, err := os.ReadFile(logs[0]) // flushed, kept for reuse
	if err != nil {
		t.Fatal(err)
	}
	last, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(logs[len(logs)-1]), ".log"))
	if err != nil {
		t.Fatal(err)
	}
	crashed := filepath.Join(t.TempDir(), fmt.Sprintf("%06d.log", last+1))
	if err := os.WriteFile(crashed, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runRecfs(t, "cat", "--no-cache", logs[0]); r.code != 0 || !strings.Contains(r.stdout, "key") {
		t.Fatalf("cat %s: %d, %d bytes out, %s", filepath.Base(logs[0]), r.code, len(r.stdout), r.stderr)
	}
	if r := runRecfs(t, "cat", "--no-cache", crashed); r.code != 0 || r.stdout != "" {
		t.Errorf("cat %s (log %s's bytes): %d, %d bytes out (%.40q), %s", filepath.Base(crashed), filepath.Base(logs[0]), r.code, len(r.stdout), r.stdout, r.stderr)
	}
	needFUSE(t)
	mnt := newMountDir(t)
	startMount(t, crashed, mnt, "--no-cache")
	var names []string
	for _, n := range dirNames(t, mnt) {
		if !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	info := infoLines(t, filepath.Join(mnt, ".recfs"))
	want := fmt.Sprintf("offset=0 length=%d ", len(old))
	if len(names) != 0 || info["records"][0] != "0" || len(info["damage"]) != 0 || len(info["stale"]) != 1 || !strings.HasPrefix(info["stale"][0], want) {
		t.Errorf("mount: %d entries, .recfs records %v, damage %v, stale %v; want none and a stale tail %q",
			len(names), info["records"], info["damage"], info["stale"], want)
	}
}
