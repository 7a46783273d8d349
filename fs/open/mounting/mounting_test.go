package mounting

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirEmpty: an empty directory is empty, one with an entry is not, and
// a listing that fails (here: not a directory) is an error rather than
// "empty" (which let a mount go over whatever could not be listed).
func TestDirEmpty(t *testing.T) {
	empty := t.TempDir()
	full := t.TempDir()
	file := filepath.Join(full, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		want    bool
		wantErr bool
	}{
		{empty, true, false},
		{full, false, false},
		{file, false, true},
		{filepath.Join(empty, "missing"), false, true},
	} {
		got, err := dirEmpty(tc.path)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("dirEmpty(%s) = %v, %v; want %v, error %v", tc.path, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestCheckPaths: a source and an empty directory pass, made absolute;
// each path that a mount must refuse is refused with a message naming why.
func TestCheckPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "x.log")
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	empty, full := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "sub")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(empty, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src, mnt string
		nonEmpty bool
		want     string // "": accepted
	}{
		{src, empty, false, ""},
		{src, filepath.Join(dir, "link"), false, ""},
		{src, full, true, ""},
		{src, full, false, "not empty"},
		{filepath.Join(dir, "missing"), empty, false, "no such file"},
		{src, filepath.Join(dir, "missing"), false, "no such file"},
		{src, src, false, "not a directory"},
		{dir, inside, false, "inside the source"},
		{inside, dir, true, "inside the mountpoint"},
	} {
		s, m, err := CheckPaths(c.src, c.mnt, c.nonEmpty)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckPaths(%s, %s): %v", c.src, c.mnt, err)
		case c.want == "" && (!filepath.IsAbs(s) || m != empty && m != full):
			t.Errorf("CheckPaths(%s, %s) = %s, %s: want absolute, symlink-free paths", c.src, c.mnt, s, m)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckPaths(%s, %s): %v, want an error saying %q", c.src, c.mnt, err, c.want)
		}
	}
}

// TestEntryString: a mount is described by type and source.
func TestEntryString(t *testing.T) {
	e := Entry{Point: "/m", FSType: FSType, Source: "/data/x.log"}
	if got, want := e.String(), "fuse.recfs (/data/x.log)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
