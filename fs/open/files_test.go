package open

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// TestExpand: a directory operand gives the record files under it (by
// content, by name even when damaged, MANIFEST-*), counts the others
// (LOCK, a saved-index sidecar, text) and keeps named files and URLs as
// given; FileFormat names each file's format.
func TestExpand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var log bytes.Buffer
	w := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	if _, err := w.WriteRecord([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"db/000001.wal":                 log.Bytes(), // a record file by content alone
		"db/000002.log":                 []byte("damaged"),
		"db/MANIFEST-000003":            nil,
		"db/LOCK":                       nil,
		"db/CURRENT":                    []byte("MANIFEST-000003\n"),
		"db/000001.wal" + SidecarSuffix: []byte("saved"),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	named := filepath.Join(dir, "db", "LOCK")
	got, other, err := Expand([]string{filepath.Join(dir, "db"), named, "s3://b/k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "db/000001.wal"), filepath.Join(dir, "db/000002.log"),
		filepath.Join(dir, "db/MANIFEST-000003"), named, "s3://b/k"}
	if !slices.Equal(got, want) || other != 3 {
		t.Errorf("Expand = %q, %d others; want %q, 3", got, other, want)
	}
	for name, want := range map[string]string{"db/000001.wal": "leveldb", "db/000002.log": "other", "db/CURRENT": "other", "db": "other"} {
		if f, _ := FileFormat(filepath.Join(dir, name)); f != want {
			t.Errorf("FileFormat(%s) = %q, want %q", name, f, want)
		}
	}
	if _, size := FileFormat(filepath.Join(dir, "db/000001.wal")); size != int64(log.Len()) {
		t.Errorf("FileFormat size = %d, want %d", size, log.Len())
	}
	if err := os.Mkdir(filepath.Join(dir, "db", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := DirEntries(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range ents {
		lines = append(lines, fmt.Sprintf("%s %v %d %s", e.Name, e.Dir, e.Size, e.Format))
	}
	wantEnts := []string{"000001.wal false " + fmt.Sprint(log.Len()) + " leveldb", "000001.wal" + SidecarSuffix + " false 5 other",
		"000002.log false 7 other", "CURRENT false 16 other", "LOCK false 0 other", "MANIFEST-000003 false 0 other", "sub true 0 dir"}
	if !slices.Equal(lines, wantEnts) {
		t.Errorf("DirEntries = %q\nwant %q", lines, wantEnts)
	}
	if _, err := DirEntries(filepath.Join(dir, "nosuch")); err == nil {
		t.Error("DirEntries of a missing directory: no error")
	}
}

// TestLocalDirTarget: a local directory is one; a file, a missing path and a
// URL are not.
func TestLocalDirTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]bool{dir: true, file: false, filepath.Join(dir, "nosuch"): false, "s3://b/p/": false, "https://h/d/": false} {
		if got := LocalDir(target); got != want {
			t.Errorf("LocalDir(%q) = %v, want %v", target, got, want)
		}
	}
}

// TestResolve: a local target is made absolute with its links resolved, a
// URL is kept as given, and a device or a missing path is refused.
func TestResolve(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.log")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{filepath.Join(dir, "link"): file, dir: dir, "s3://b/k": "s3://b/k"} {
		if got, err := Resolve(target); err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", target, got, err, want)
		}
	}
	for _, bad := range []string{"/dev/null", filepath.Join(dir, "missing")} {
		if got, err := Resolve(bad); err == nil {
			t.Errorf("Resolve(%s) = %q, want an error", bad, got)
		}
	}
}
