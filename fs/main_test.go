package fs

import (
	"os"
	"testing"
)

// TestMain points the user's cache directory at a temporary folder, so the
// tests' saved indexes and torn-tail backups never land in (or depend on)
// the real one: a folder left full by earlier runs made appends refuse.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "recfs-fs-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
