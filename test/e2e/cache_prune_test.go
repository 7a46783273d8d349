package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestMountPrunesCache: a mount that saves an index prunes its cache
// directory (the first save of the day): the saved index of a source that
// is gone goes, then the least recently used while the rest exceed the
// 1 GiB default cap; the newer indexes and the mount's own stay, and the
// directory ends under the cap. The big indexes are sparse (pruning counts
// their sizes, as du --apparent-size does).
func TestMountPrunesCache(t *testing.T) {
	needFUSE(t)
	cache := t.TempDir()
	srcDir := t.TempDir()
	const bigSize = 400 << 20 // three of them pass the cap
	indexOf := func(name string, seed int64) (src, idx string) {
		t.Helper()
		src = filepath.Join(srcDir, name)
		recfile.WriteLog(t, src, genRecords(seed, 3, 20))
		before := cacheFiles(t, cache)
		if r := runRecfs(t, "index", "--cache-dir", cache, src); r.code != 0 {
			t.Fatalf("index %s: %d %s", src, r.code, r.stderr)
		}
		for _, f := range cacheFiles(t, cache) {
			if !contains(before, f) {
				return src, f
			}
		}
		t.Fatalf("index %s saved no cache file in %s", src, cache)
		return "", ""
	}
	// Three big ones, used 3, 2 and 1 days ago, and one of a removed file.
	var big []string
	for i, name := range []string{"old.log", "mid.log", "new.log"} {
		_, idx := indexOf(name, int64(60+i))
		if err := os.Truncate(idx, bigSize); err != nil {
			t.Fatal(err)
		}
		used := time.Now().Add(-time.Duration(3-i) * 24 * time.Hour)
		if err := os.Chtimes(idx, used, used); err != nil {
			t.Fatal(err)
		}
		big = append(big, idx)
	}
	goneSrc, gone := indexOf("gone.log", 63)
	if err := os.Remove(goneSrc); err != nil {
		t.Fatal(err)
	}
	// A stamp from yesterday: due for pruning today.
	stamp := filepath.Join(cache, ".last-prune")
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	yesterday := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(stamp, yesterday, yesterday); err != nil {
		t.Fatal(err)
	}

	before := cacheFiles(t, cache)
	src := filepath.Join(srcDir, "mounted.log")
	recs := genRecords(64, 3, 20)
	recfile.WriteLog(t, src, recs)
	mnt := newMountDir(t)
	startMount(t, src, mnt, "--cache-dir", cache)
	if b, err := os.ReadFile(filepath.Join(mnt, "000002")); err != nil || string(b) != string(recs[2]) {
		t.Fatalf("record 2 through the mount: %q %v", b, err)
	}
	info, err := os.ReadFile(filepath.Join(mnt, ".recfs"))
	if err != nil {
		t.Fatal(err)
	}
	var own string
	for _, f := range cacheFiles(t, cache) {
		if !contains(before, f) {
			own = f
		}
	}
	if own == "" || !strings.Contains(string(info), filepath.Base(own)) {
		t.Fatalf("the mount saved no index of its own in %s (.recfs:\n%s)", cache, info)
	}

	after := cacheFiles(t, cache)
	for _, c := range []struct {
		path string
		kept bool
		why  string
	}{
		{gone, false, "its source is gone"},
		{big[0], false, "least recently used over the cap"},
		{big[1], true, "under the cap once the oldest went"},
		{big[2], true, "the most recently used big one"},
		{own, true, "the mount's own"},
	} {
		if contains(after, c.path) != c.kept {
			t.Errorf("%s (%s): kept %v, want %v", filepath.Base(c.path), c.why, !c.kept, c.kept)
		}
	}
	var total int64
	for _, f := range after {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	if total > 1<<30 {
		t.Errorf("cache holds %d bytes after pruning; cap 1 GiB", total)
	}
	if fi, err := os.Stat(stamp); err != nil || time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("the prune stamp was not renewed: %v %v", fi, err)
	}
}

// cacheFiles lists the saved indexes (*.idx) in dir.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
