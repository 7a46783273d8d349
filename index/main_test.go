package index

import (
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// TestMain points the user's cache directory at a temporary folder, so the
// tests' saved indexes and torn-tail backups never land in (or depend on)
// the real one.
func TestMain(m *testing.M) {
	codectest.MainInScratchDirs(m, "index", "XDG_CACHE_HOME")
}
