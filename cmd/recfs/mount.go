package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/recfs/recfs/codec/decode"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/bazil"
	"github.com/recfs/recfs/fs/gofuse"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/fs/open/mounting"
)

func init() { registerCommand("mount", newMountCmd) }

// backends are the FUSE libraries recfs can serve a tree with.
var backends = map[string]fs.Mounter{
	"gofuse": gofuse.Mount,
	"bazil":  bazil.Mount,
}

// Environment of a daemon child: the inherited file descriptor it reports
// readiness on.
const envReadyFD = "RECFS_READY_FD"

// gcPercent is the mount server's GOGC unless the environment sets one.
const gcPercent = 50

// mountFlags are the flags of `recfs mount`.
type mountFlags struct {
	src            *sourceFlags
	xattrs         bool
	allowOther     bool
	allowNonEmpty  bool
	daemon         bool
	debugFuse      bool
	hideOther      bool
	backend        string
	logFile        string
	rw, follow     bool
	force          bool
	newFormat      string
	newTrailer     bool
	followInterval time.Duration
	cacheMem       string
	pendingMem     string
	uid, gid       uint32
	umask          string
	noexec         bool
	decode         *decodeFlags
}

func newMountCmd() *cobra.Command {
	f := &mountFlags{}
	cmd := &cobra.Command{
		Use:   "mount SRC MNT",
		Short: "Mount a record file (or a directory tree of them) at MNT, read-only unless --rw",
		Long: `mount serves SRC at the directory MNT through FUSE.

If SRC is a record file, MNT becomes its record directory: one read-only file
per record (000000, 000001, ...), trailer/ for a grailbio trailer, and .recfs
describing the file. If SRC is a directory, MNT mirrors it: every file whose
content is a record file appears as a record directory of the same name,
indexed on first use; other files are passed through read-only (or hidden
with --hide-other).

With --rw, a file created in a record directory (cp, echo >, tee, dd) is
appended to the source as one record when it is closed, and mkdir in a
directory mount makes a new, empty record file (--new-format; .rio and
.recordio names are recordio). Existing records stay immutable (EPERM).
Appends to a log its writer closed (pebble's end-of-log marker) fail with
EPERM, and appends to a log whose directory holds a database LOCK file that a
running database has locked fail with EBUSY unless --force is given. A torn
record a crashed writer left at the end of a file is moved aside (saved under
<user cache dir>/recfs/torn; the log says where); other bytes after the last
record make appends fail with EIO and a log line naming their offset, unless
--force is given (then they are moved aside the same way).

mount runs in the foreground and prints "ready" once the mount answers;
SIGINT or SIGTERM unmount it. With --daemon it returns once the mount is
ready and a background process serves it; "recfs unmount MNT" ends it. A
daemon logs to the system log (syslog, journald) when one listens on
/dev/log, else to $XDG_STATE_HOME/recfs/daemon.log (see --log-file). Under
systemd, run it in the foreground as a Type=notify service: it sends
READY=1 to $NOTIFY_SOCKET once the mount answers.

Owner, group and permissions follow the source file unless --uid, --gid or
--umask say otherwise; --allow-other always turns on the kernel's permission
checks (default_permissions) against what the mount reports.

--decode NAME shows each record decoded as text by the decoder NAME (the
list is below; recfs cat --help and the README show the output), and
--decode auto picks a decoder for each record file by its first records
(.recfs says which and why); ls -l shows the sizes of the texts. A record
the decoder does not fit reads as EIO and is logged once. Decoders with a
summary (a MANIFEST's live files) serve it as .recfs-summary in the record
directory: not listed, so that grep -r sees records only, but read by name.

` + decodersHelp() + "\n" + helperUsage(),
		Example: `  recfs mount events.log /mnt/ev
  recfs mount --daemon /data/logs /mnt/logs && ls /mnt/logs
  recfs unmount /mnt/logs
  mount -t fuse.recfs -o ro,allow_other,uid=1000,umask=022 /data/logs /mnt/logs`,
		Args: cobra.ExactArgs(2),
	}
	f.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := runMount(cmd, f, args[0], args[1])
		reportDaemonError(err)
		return err
	}
	return cmd
}

// register adds mount's flags to cmd, bound to f.
func (f *mountFlags) register(cmd *cobra.Command) {
	f.src = addSourceFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.xattrs, "xattrs", false, "serve user.recfs.* extended attributes (slows ls -l)")
	fl.BoolVar(&f.allowOther, "allow-other", false, "let other users use the mount (needs user_allow_other in /etc/fuse.conf)")
	fl.BoolVar(&f.allowNonEmpty, "allow-non-empty", false, "mount over a directory that is not empty")
	fl.BoolVar(&f.daemon, "daemon", false, "serve from a background process; return once the mount is ready")
	fl.BoolVar(&f.debugFuse, "debug-fuse", false, "log every FUSE request (at debug level)")
	fl.BoolVar(&f.hideOther, "hide-other", false, "in a directory mount, hide files that are not record files")
	fl.StringVar(&f.backend, "backend", "gofuse", "FUSE library: gofuse or bazil")
	fl.StringVar(&f.logFile, "log-file", "", "with --daemon: append the daemon's log to this file (in a directory only you or root may write to), rotated to FILE.1 at 10 MiB (default: the system log (syslog, journald) when one listens, else $XDG_STATE_HOME/recfs/daemon.log or ~/.local/state/recfs/daemon.log; syslog: the system log; -: none)")
	fl.BoolVar(&f.rw, "rw", false, "append records through the mount: a file created in a record directory becomes one record when closed")
	fl.BoolVar(&f.force, "force", false, "with --rw: append even to logs whose directory holds a LOCK file that a running database has locked, and to files that end in bytes that are not a torn record (moved aside)")
	fl.StringVar(&f.newFormat, "new-format", "leveldb", "with --rw: format of record files made by mkdir (leveldb, recordio or tfrecord; .rio and .recordio names are always recordio, .tfrecord and .tfrecords names tfrecord)")
	fl.BoolVar(&f.newTrailer, "new-trailer", false, "with --rw: recordio files made by mkdir get an (empty) trailer")
	_ = cmd.RegisterFlagCompletionFunc("new-format", fixedCompletion("leveldb", "recordio", "tfrecord"))
	fl.BoolVar(&f.follow, "follow", false, "show records appended to the source by any process while mounted")
	fl.DurationVar(&f.followInterval, "follow-interval", 0, "with --follow: how often the source is checked (default 500ms)")
	fl.StringVar(&f.cacheMem, "cache-mem", "256M", "memory for decompressed recordio and compressed TFRecord data, shared by every file of the mount")
	fl.StringVar(&f.pendingMem, "pending-mem", "64M", "with --rw: memory for files being written, shared by all of them (beyond it they go to temporary files)")
	fl.Uint32Var(&f.uid, "uid", 0, "owner of every file and directory of the mount (default: the source's)")
	fl.Uint32Var(&f.gid, "gid", 0, "group of every file and directory of the mount (default: the source's)")
	fl.StringVar(&f.umask, "umask", "", "octal permission bits to withhold from 0555 directories (0777 with --rw) and 0444 records (default: follow the source's mode)")
	fl.BoolVar(&f.noexec, "noexec", false, "passed-through files of a directory mount lose their execute bits (-o noexec)")
	_ = cmd.RegisterFlagCompletionFunc("backend", fixedCompletion("gofuse", "bazil"))
	f.decode = addDecodeFlags(cmd)
}

// mountPlan is what validate makes of mount's command line.
type mountPlan struct {
	src, mnt string // absolute (src as given when a URL)
	mounter  fs.Mounter
	tree     open.TreeOptions
}

// runMount checks the command line and the two paths, then mounts (from a
// background process with --daemon).
func runMount(cmd *cobra.Command, f *mountFlags, src, mnt string) error {
	p, err := f.validate(cmd, src, mnt)
	if err != nil {
		return err
	}
	if f.daemon && os.Getenv(envReadyFD) == "" {
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
		return usagef("unknown --backend %q (available: %s)", f.backend, backendNames())
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
		setupDaemonLog()
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
	}, mounting.Options{})
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
		if _, err := notifyStopping("unmounting " + p.mnt); err != nil {
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
	if _, err := notifyReady(fmt.Sprintf("%s mounted at %s", p.src, p.mnt)); err != nil {
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

func backendNames() string {
	var names []string
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
