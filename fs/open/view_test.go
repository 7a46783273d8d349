package open

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocalDir: a decoder reads plain names beside its source only: no
// path that leaves the directory, no symbolic link, no special file.
func TestLocalDir(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "MANIFEST-000001")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := localDir{dir: dir}
	if b, err := d.ReadFile("CURRENT", 100); err != nil || string(b) != "MANIFEST-000001\n" {
		t.Fatalf("CURRENT: %q, %v", b, err)
	}
	if _, err := d.ReadFile("CURRENT", 3); err == nil {
		t.Error("a file past max was read")
	}
	for _, bad := range []string{"../" + filepath.Base(filepath.Dir(outside)) + "/secret", "MANIFEST-000001", "sub", "..", "", "a/b"} {
		if b, err := d.ReadFile(bad, 100); err == nil {
			t.Errorf("ReadFile(%q) read %q", bad, b)
		}
		if r, err := d.OpenRecords(bad); err == nil {
			r.Close()
			t.Errorf("OpenRecords(%q) opened it", bad)
		}
	}
}

// TestLocalDirSub: a decoder enters a directory beside its source (a
// Prometheus checkpoint) by a plain name, never through a symbolic link,
// and reads plain names in it under the same rules.
func TestLocalDirSub(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "00000000"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "checkpoint.00000001"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.00000001", "ok"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "checkpoint.00000002")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "00000000"), filepath.Join(dir, "checkpoint.00000001", "link")); err != nil {
		t.Fatal(err)
	}
	d := localDir{dir: dir}
	sub, err := d.Sub("checkpoint.00000001")
	if err != nil {
		t.Fatal(err)
	}
	if names, err := sub.Names(); err != nil || len(names) != 2 {
		t.Errorf("names %q, %v; want ok and link", names, err)
	}
	if b, err := sub.ReadFile("ok", 10); err != nil || string(b) != "ok" {
		t.Errorf("ok: %q, %v", b, err)
	}
	if b, err := sub.ReadFile("link", 10); err == nil {
		t.Errorf("a link in the directory was followed: %q", b)
	}
	for _, bad := range []string{"checkpoint.00000002", "..", "", "a/b", "checkpoint.00000001/.."} {
		if s, err := d.Sub(bad); err == nil {
			names, _ := s.Names()
			t.Errorf("Sub(%q) entered it: %q", bad, names)
		}
	}
	if _, err := sub.(localDir).Sub("x"); err == nil {
		t.Error("a second level was entered")
	}
}
