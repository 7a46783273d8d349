package main

import (
	"time"

	"github.com/spf13/cobra"
)

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

// newMountCmd builds `recfs mount`: its flags and help are in both links,
// its server only in recfs-full (mountrun.go); the lean recfs hands a
// mount's command line to recfs-full once it has parsed it (see
// handoff.go).
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
		return runMountCmd(cmd, f, args[0], args[1])
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
