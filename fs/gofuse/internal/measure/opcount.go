// Package measure holds the go-fuse server's measuring hooks for tests and
// benchmarks, switched on by environment variables: a per-opcode request
// counter (OpCountsEnv) and a CPU profile of the serving process
// (CPUProfileEnv). They serve nothing; a mount without the variables
// runs without them.
package measure

import (
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"
)

// OpCountsEnv names the environment variable of the per-opcode request
// counter, a measuring hook for tests and benchmarks: when it holds a file
// path, the server counts the FUSE requests it answers, by opcode, and
// writes the totals so far to that file (one "NAME COUNT" line per opcode,
// and one for the records pushed into the page cache, NOTIFY_STORE;
// sorted) whenever the process gets SIGUSR1, and once more at unmount.
const OpCountsEnv = "RECFS_FUSE_OPCOUNTS"

// The opcodes the counter tells apart.
const (
	opLookup = iota
	opForget
	opGetattr
	opSetattr
	opOpen
	opRead
	opFlush
	opRelease
	opCreate
	opWrite
	opFsync
	opOpendir
	opReaddir
	opReaddirplus
	opReleasedir
	opGetxattr
	opListxattr
	opStatfs
	opStatx
	opAccess
	numOps
)

var opNames = [numOps]string{
	opLookup: "LOOKUP", opForget: "FORGET", opGetattr: "GETATTR", opSetattr: "SETATTR",
	opOpen: "OPEN", opRead: "READ", opFlush: "FLUSH", opRelease: "RELEASE",
	opCreate: "CREATE", opWrite: "WRITE", opFsync: "FSYNC", opOpendir: "OPENDIR",
	opReaddir: "READDIR", opReaddirplus: "READDIRPLUS", opReleasedir: "RELEASEDIR",
	opGetxattr: "GETXATTR", opListxattr: "LISTXATTR", opStatfs: "STATFS", opStatx: "STATX",
	opAccess: "ACCESS",
}

// Counted returns raw with the request counter of OpCountsEnv in front of
// it when that variable names a file, and raw itself otherwise. The counts
// are written to the file on every SIGUSR1 until done is closed, and once
// more then.
func Counted(raw fuse.RawFileSystem, done <-chan struct{}) fuse.RawFileSystem {
	path := os.Getenv(OpCountsEnv)
	if path == "" {
		return raw
	}
	c := &opCounter{RawFileSystem: raw}
	c.dumpOnSignal(path, done)
	return c
}

// opCounter wraps the node file system and counts the requests it
// answers. Opcodes it does not name pass through uncounted.
type opCounter struct {
	fuse.RawFileSystem
	n [numOps]atomic.Int64
}

// stores counts the records pushed into the kernel's page cache
// (FUSE_NOTIFY_STORE answered OK) while OpCountsEnv is set; the counts
// report it as NOTIFY_STORE. A process serves one go-fuse mount.
var stores atomic.Int64

// CountedStore returns store, counting the records it stores (NOTIFY_STORE
// in the counts) when OpCountsEnv names a file: tests wait on it to know
// the pusher is done instead of sleeping.
func CountedStore(store func(id uint64, data []byte) fuse.Status) func(id uint64, data []byte) fuse.Status {
	if os.Getenv(OpCountsEnv) == "" {
		return store
	}
	return func(id uint64, data []byte) fuse.Status {
		st := store(id, data)
		if st == fuse.OK {
			stores.Add(1)
		}
		return st
	}
}

// String renders the counts as "NAME COUNT" lines, sorted by name: the
// requests answered by opcode, and NOTIFY_STORE.
func (c *opCounter) String() string {
	lines := make([]string, 0, numOps+1)
	for i := range c.n {
		lines = append(lines, fmt.Sprintf("%s %d", opNames[i], c.n[i].Load()))
	}
	lines = append(lines, fmt.Sprintf("NOTIFY_STORE %d", stores.Load()))
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// dumpOnSignal starts writing the counts to path on every SIGUSR1 until
// done is closed, and once more then. SIGUSR1 is caught from the moment it
// returns (before the mount is ready: its default action would end the
// process).
func (c *opCounter) dumpOnSignal(path string, done <-chan struct{}) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go c.dump(path, sig, done)
}

func (c *opCounter) dump(path string, sig chan os.Signal, done <-chan struct{}) {
	defer signal.Stop(sig)
	write := func() {
		// Whole or not at all: readers poll for the file.
		tmp := path + ".tmp"
		err := os.WriteFile(tmp, []byte(c.String()), 0o600)
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			logrus.WithError(err).Warn("writing FUSE op counts")
		}
	}
	for {
		select {
		case <-sig:
			write()
		case <-done:
			write()
			return
		}
	}
}

func (c *opCounter) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	c.n[opLookup].Add(1)
	return c.RawFileSystem.Lookup(cancel, h, name, out)
}

func (c *opCounter) Forget(nodeid, nlookup uint64) {
	c.n[opForget].Add(1)
	c.RawFileSystem.Forget(nodeid, nlookup)
}

func (c *opCounter) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.n[opGetattr].Add(1)
	return c.RawFileSystem.GetAttr(cancel, in, out)
}

func (c *opCounter) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	c.n[opSetattr].Add(1)
	return c.RawFileSystem.SetAttr(cancel, in, out)
}

func (c *opCounter) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.n[opOpen].Add(1)
	return c.RawFileSystem.Open(cancel, in, out)
}

func (c *opCounter) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	c.n[opRead].Add(1)
	return c.RawFileSystem.Read(cancel, in, buf)
}

func (c *opCounter) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	c.n[opFlush].Add(1)
	return c.RawFileSystem.Flush(cancel, in)
}

func (c *opCounter) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	c.n[opRelease].Add(1)
	c.RawFileSystem.Release(cancel, in)
}

func (c *opCounter) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	c.n[opCreate].Add(1)
	return c.RawFileSystem.Create(cancel, in, name, out)
}

func (c *opCounter) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	c.n[opWrite].Add(1)
	return c.RawFileSystem.Write(cancel, in, data)
}

func (c *opCounter) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	c.n[opWrite].Add(1)
	return c.RawFileSystem.Writev(cancel, in, data)
}

func (c *opCounter) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	c.n[opFsync].Add(1)
	return c.RawFileSystem.Fsync(cancel, in)
}

func (c *opCounter) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	c.n[opOpendir].Add(1)
	return c.RawFileSystem.OpenDir(cancel, in, out)
}

func (c *opCounter) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.n[opReaddir].Add(1)
	return c.RawFileSystem.ReadDir(cancel, in, out)
}

func (c *opCounter) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	c.n[opReaddirplus].Add(1)
	return c.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (c *opCounter) ReleaseDir(in *fuse.ReleaseIn) {
	c.n[opReleasedir].Add(1)
	c.RawFileSystem.ReleaseDir(in)
}

func (c *opCounter) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	c.n[opGetxattr].Add(1)
	return c.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (c *opCounter) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	c.n[opListxattr].Add(1)
	return c.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (c *opCounter) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	c.n[opStatfs].Add(1)
	return c.RawFileSystem.StatFs(cancel, h, out)
}

func (c *opCounter) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	c.n[opStatx].Add(1)
	return c.RawFileSystem.Statx(cancel, in, out)
}

func (c *opCounter) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	c.n[opAccess].Add(1)
	return c.RawFileSystem.Access(cancel, in)
}
