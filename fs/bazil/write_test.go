//go:build linux

package bazil

import (
	"testing"

	"github.com/recfs/recfs/fs/fusetest"
)

// TestDurability: close(2) appends, fsync(2) syncs the source before it
// returns (fusetest.CheckDurability), through a real mount.
func TestDurability(t *testing.T) { fusetest.CheckDurability(t, Mount) }
