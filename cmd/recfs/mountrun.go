//go:build !recfs_lean

package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/bazil"
	"github.com/recfs/recfs/fs/gofuse"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/fs/open/daemon"
	"github.com/recfs/recfs/fs/open/mounting"
)

// The server of `recfs mount`, in recfs-full only (the lean link leaves
// the FUSE libraries out; mount.go has the command's flags and help).

// backends are the FUSE libraries recfs can serve a tree with.
var backends = map[string]fs.Mounter{
	"gofuse": gofuse.Mount,
	"bazil":  bazil.Mount,
}

// gcPercent is the mount server's GOGC unless the environment sets one.
const gcPercent = 50

// mountPlan is what validate makes of mount's command line.
type mountPlan struct {
	src, mnt string // absolute (src as given when a URL)
	mounter  fs.Mounter
	tree     open.TreeOptions
}

// runMountCmd runs a parsed `recfs mount` command line: it checks it and
// the two paths, then mounts (from a background process with --daemon).
// A daemon child's error goes to its waiting parent too.
func runMountCmd(cmd *cobra.Command, f *mountFlags, src, mnt string) (err error) {
	defer func() { daemonStatus().Fail(err) }()
	p, err := f.validate(cmd, src, mnt)
	if err != nil {
		return err
	}
	if f.daemon && daemonStatus() == nil {
		return startDaemon(cmd, f, p.src, p.mnt)
	}
	return f.run(cmd, p)
}

// check refuses flags that contradict each other or name nothing.
func (f *mountFlags) check() error {
	nf, err := codec.ParseFormat(f.newFormat)
	switch {
	case err != nil || (nf != codec.LevelDB && nf != codec.RecordIO && nf != codec.TFRecord):
		return usagef("--new-format %q: want leveldb, recordio or tfrecord", f.newFormat)
	case backends[f.backend] == nil:
		return usagef("unknown --backend %q (available: %s)", f.backend, strings.Join(slices.Sorted(maps.Keys(backends)), ", "))
	case f.force && !f.rw:
		return usagef("--force goes with --rw")
	}
	if err := f.decode.check(); err != nil {
		return err
	}
	if f.decode.decoding() && f.rw {
		return usagef("--decode shows records as text; it does not go with --rw")
	}
	return nil
}

// validate checks the flags and the two paths and turns them into the
// mount's plan.
func (f *mountFlags) validate(cmd *cobra.Command, src, mnt string) (mountPlan, error) {
	var p mountPlan
	if err := f.check(); err != nil {
		return p, err
	}
	tree, err := f.treeOptions(cmd)
	if err != nil {
		return p, err
	}
	if p.src, p.mnt, err = mounting.CheckPaths(src, mnt, f.allowNonEmpty); err != nil {
		return p, err
	}
	if open.Remote(p.src) && f.rw {
		return p, usagef("--rw: %s sources are read-only", strings.SplitN(p.src, ":", 2)[0]+"://")
	}
	p.mounter, p.tree = backends[f.backend], tree
	return p, nil
}

// treeOptions turns the flags into the options of the mount's tree.
func (f *mountFlags) treeOptions(cmd *cobra.Command) (open.TreeOptions, error) {
	var t open.TreeOptions
	cacheMem, err := parseSize(f.cacheMem)
	if err != nil {
		return t, usagef("--cache-mem: %v", err)
	}
	pendingMem, err := parseSize(f.pendingMem)
	if err != nil || pendingMem == 0 {
		return t, usagef("--pending-mem %q: want a size above 0", f.pendingMem)
	}
	owner, err := f.ownership(cmd)
	if err != nil {
		return t, err
	}
	iopts, err := f.src.options()
	if err != nil {
		return t, err
	}
	// Only a writable mount opens its sources for appending (which repairs
	// a crashed recordio append first).
	iopts.Writable = f.rw
	iopts.IgnoreDBLock = f.force
	iopts.MoveDamagedTail = f.force
	oo, err := openOptions(cmd, iopts)
	if err != nil {
		return t, err
	}
	if oo.Decode, err = f.decode.plan(decode.Output{}); err != nil {
		return t, err
	}
	nf, _ := codec.ParseFormat(f.newFormat)
	return open.TreeOptions{
		Options: oo, HideOther: f.hideOther, Follow: f.follow,
		ReadWrite: f.rw, NewFormat: nf, NewTrailer: f.newTrailer,
		CacheMem: cacheMem, // one budget for every recordio reader of this server
		FS:       fs.Options{PendingMem: pendingMem, Owner: owner},
	}, nil
}

// run serves the mount p in this process until it is unmounted.
func (f *mountFlags) run(cmd *cobra.Command, p mountPlan) error {
	if daemonChild() {
		daemon.SetupLog()
	}
	if f.debugFuse && logrus.GetLevel() < logrus.DebugLevel {
		logrus.SetLevel(logrus.DebugLevel)
	}
	if os.Getenv("GOGC") == "" {
		// A mount is a long-lived server whose garbage (names, attribute
		// replies) dwarfs its live heap: collect earlier, keep RSS flat.
		debug.SetGCPercent(gcPercent)
	}
	tree, err := open.Tree(cmd.Context(), p.src, p.tree)
	if err != nil {
		return err
	}
	defer tree.Close()
	m, err := mounting.Mount(p.mounter, p.mnt, tree, fs.MountOptions{
		FSName:         p.src,
		Name:           "recfs",
		AllowOther:     f.allowOther,
		Xattrs:         f.xattrs,
		Debug:          f.debugFuse,
		ReadWrite:      f.rw,
		Follow:         f.follow,
		FollowInterval: f.followInterval,
	}, mounting.Options{Unannounced: daemonStatus().Abandoned})
	if errors.Is(err, mounting.ErrEndedEarly) {
		// Unmounted from elsewhere before we saw it ready: nothing to do.
		logrus.WithField("mountpoint", p.mnt).Info("unmounted")
		return nil
	}
	if err != nil {
		return err
	}
	if err := f.announce(cmd, p); err != nil {
		return err
	}
	return m.Wait(cmd.Context(), func() {
		if _, err := daemon.NotifyStopping("unmounting " + p.mnt); err != nil {
			logrus.WithError(err).Warn("systemd stopping notification failed")
		}
	})
}

// announce says the mount is ready: in the log, to the daemon's parent or
// on standard output, and to systemd.
func (f *mountFlags) announce(cmd *cobra.Command, p mountPlan) error {
	logrus.WithFields(logrus.Fields{"source": p.src, "mountpoint": p.mnt, "backend": f.backend}).Info("mounted")
	if daemonChild() {
		reportReady(p.src, p.mnt)
	} else if err := printReady(cmd, p.src, p.mnt, 0, ""); err != nil {
		return err
	}
	if _, err := daemon.NotifyReady(fmt.Sprintf("%s mounted at %s", p.src, p.mnt)); err != nil {
		logrus.WithError(err).Warn("systemd readiness notification failed")
	}
	return nil
}

// ownership turns --uid, --gid, --umask and --noexec into the tree's
// ownership override.
func (f *mountFlags) ownership(cmd *cobra.Command) (fs.Ownership, error) {
	o := fs.Ownership{
		UID: f.uid, SetUID: cmd.Flags().Changed("uid"),
		GID: f.gid, SetGID: cmd.Flags().Changed("gid"),
		NoExec: f.noexec,
	}
	if f.umask != "" {
		m, err := strconv.ParseUint(f.umask, 8, 32)
		if err != nil || m > 0o777 {
			return o, usagef("--umask %q: want octal permission bits such as 022", f.umask)
		}
		o.Umask, o.SetUmask = uint32(m), true
	}
	return o, nil
}
