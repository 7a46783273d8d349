package gofuse

import (
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
)

// TestWriteOptions: a writable mount is not mounted read-only and caches
// no failed lookup (the node suite, TestSuite/Write and
// TestSuite/NegativeEntries, drives its nodes).
func TestWriteOptions(t *testing.T) {
	tr := fusetest.FileTree(t, fusetest.NewMemSource(0, -1, nil), fs.Options{ReadWrite: true})
	opts := mountOptions(tr, fs.MountOptions{ReadWrite: true})
	if opts.MountOptions.DirectMountFlags&syscall.MS_RDONLY != 0 {
		t.Error("writable mount is mounted read-only")
	}
	if *opts.NegativeTimeout > time.Millisecond {
		t.Errorf("negative timeout %v in a writable mount", *opts.NegativeTimeout)
	}
	ro := mountOptions(tr, fs.MountOptions{})
	if ro.MountOptions.DirectMountFlags&syscall.MS_RDONLY == 0 || *ro.NegativeTimeout != time.Second {
		t.Errorf("read-only mount: flags %#x, negative timeout %v", ro.MountOptions.DirectMountFlags, *ro.NegativeTimeout)
	}
}

// TestDurability: close(2) appends, fsync(2) syncs the source before it
// returns (fusetest.CheckDurability), through a real mount.
func TestDurability(t *testing.T) { fusetest.CheckDurability(t, Mount) }
