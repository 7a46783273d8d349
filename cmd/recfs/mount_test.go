package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMountRefusals runs `recfs mount` in-process on command lines that
// must be refused before anything is mounted, so no FUSE is needed.
func TestMountRefusals(t *testing.T) {
	dir := t.TempDir()
	logf := filepath.Join(dir, "x.log")
	if err := os.WriteFile(logf, []byte("not even a log"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "sub")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"mount", "--rw", "--new-format", "recordio-legacy", logf, empty}, exitUsage, "--new-format"},
		{[]string{"mount", "--follow", "--follow-interval", "soon", logf, empty}, exitUsage, "invalid argument"},
		{[]string{"mount", "--backend", "nope", logf, empty}, exitUsage, "unknown --backend"},
		{[]string{"mount", "--no-cache", "--cache-dir", dir, logf, empty}, exitUsage, "contradict"},
		{[]string{"mount", logf}, exitUsage, ""},
		{[]string{"mount", filepath.Join(dir, "missing"), empty}, exitFailure, "no such file"},
		{[]string{"mount", logf, filepath.Join(dir, "missing")}, exitFailure, "no such file"},
		{[]string{"mount", logf, logf}, exitFailure, "not a directory"},
		{[]string{"mount", logf, full}, exitFailure, "not empty"},
		{[]string{"mount", dir, inside}, exitFailure, "inside the source"},
		{[]string{"mount", inside, dir}, exitFailure, "inside the mountpoint"},
		{[]string{"mount", "--no-cache", logf, empty}, exitFailure, "not a record file"},
		{[]string{"mount", "--rw", "s3://bucket/x.log", empty}, exitUsage, "--rw: s3:// sources are read-only"},
		{[]string{"mount", "--rw", "https://example.com/x.log", empty}, exitUsage, "--rw: https:// sources are read-only"},
		{[]string{"unmount", empty}, exitFailure, "not a mount point"},
		{[]string{"unmount"}, exitUsage, ""},
	} {
		r := recfs(t, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("recfs %q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.msg)
		}
	}
}
