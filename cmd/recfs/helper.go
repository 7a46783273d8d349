package main

import (
	"fmt"
	"maps"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/recfs/recfs/fs/open/mounting"
)

// The mount(8) convention: `mount -t fuse.recfs SRC MNT -o OPTS` (or an
// fstab line of type fuse.recfs) runs mount.fuse3, which runs
// `recfs SRC MNT -o OPTS` through /bin/sh with PATH set to the system
// directories (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin),
// and returns when that command exits. sshfs and rclone follow the same
// convention. recfs therefore accepts that argv form (no subcommand), turns
// every -o option into the mount flag of the same meaning, and serves from a
// background process (--daemon) unless -f is given.

// helperFlagOption maps a "-o name" or "-o name=value" option to the mount
// flag of the same meaning. takesValue says whether it needs "=value".
type helperFlagOption struct {
	flag       string
	takesValue bool
}

// helperAliases are the -o options that are not a mount flag's name.
var helperAliases = map[string]helperFlagOption{
	"nonempty":            {"--allow-non-empty", false},
	"default_permissions": {"", false},           // what allow_other turns on anyway
	"ro":                  {"--rw=false", false}, // the last of ro and rw wins, as in mount(8)
	"exec":                {"--noexec=false", false},
}

// helperOptions are the recfs-specific -o options: one for each flag of
// mount and of the root (--flag-name is -o flag_name; --daemon is -f's
// business), and the aliases.
var helperOptions = sync.OnceValue(func() map[string]helperFlagOption {
	opts := maps.Clone(helperAliases)
	add := func(f *pflag.Flag) {
		if f.Name == "daemon" || f.Name == "help" || f.Name == "json" || f.Deprecated != "" {
			return
		}
		opts[strings.ReplaceAll(f.Name, "-", "_")] = helperFlagOption{"--" + f.Name, f.Value.Type() != "bool"}
	}
	cmd := &cobra.Command{}
	(&mountFlags{}).register(cmd)
	cmd.Flags().VisitAll(add)
	root := &cobra.Command{}
	(&globalFlags{}).register(root)
	root.PersistentFlags().VisitAll(add)
	return opts
})

// helperMode reports whether args is the mount helper's argv form: the
// first argument is neither a flag nor a command, and names a path (it
// holds a slash or exists), so that a mistyped command name is still
// reported as one.
func helperMode(args []string, isCommand func(string) bool) bool {
	if len(args) < 2 || strings.HasPrefix(args[0], "-") || isCommand(args[0]) {
		return false
	}
	if strings.Contains(args[0], "/") {
		return true
	}
	_, err := os.Stat(args[0])
	return err == nil
}

// helperArgs turns the helper argv `SRC MNT [-o OPTS]... [-f] [--flag...]`
// into a `mount` command line. Without -f the mount runs as a daemon.
// Unknown -o options are a usage error naming each of them.
func helperArgs(args []string) ([]string, error) {
	var pos, flags, unknown []string
	foreground := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			if i+1 >= len(args) {
				return nil, usagef("-o needs a list of mount options")
			}
			i++
			fl, unk := translateOptions(args[i])
			flags, unknown = append(flags, fl...), append(unknown, unk...)
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			fl, unk := translateOptions(a[2:])
			flags, unknown = append(flags, fl...), append(unknown, unk...)
		case a == "-f" || a == "--foreground":
			foreground = true
		case a == "-d":
			foreground = true
			flags = append(flags, "--debug-fuse", "--verbose")
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a) // a recfs mount flag, as on its command line
		default:
			pos = append(pos, a)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, usagef("unknown mount option(s): %s (see recfs mount --help for the -o forms)", strings.Join(unknown, ", "))
	}
	if len(pos) != 2 {
		return nil, usagef("as a mount helper recfs takes SRC MNT [-o options], got %d paths", len(pos))
	}
	out := []string{"mount"}
	if !foreground {
		out = append(out, "--daemon")
	}
	out = append(out, flags...)
	return append(out, "--", pos[0], pos[1]), nil
}

// translateOptions maps one comma-separated -o list to mount flags and
// returns the options it does not know (mount(8)'s own are left out, see
// mounting.HelperOptions).
func translateOptions(list string) (flags, unknown []string) {
	for _, o := range mounting.HelperOptions(list) {
		h, ok := helperOptions()[o.Name]
		if !ok || h.takesValue != o.HasValue {
			unknown = append(unknown, o.Raw)
			continue
		}
		switch {
		case h.flag == "":
		case o.HasValue:
			flags = append(flags, h.flag+"="+o.Value)
		default:
			flags = append(flags, h.flag)
		}
	}
	return flags, unknown
}

// helperUsage is the -o part of recfs mount's help.
func helperUsage() string {
	var names []string
	for n, h := range helperOptions() {
		if h.takesValue {
			n += "=…"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Sprintf(`As a mount helper (mount -t fuse.recfs SRC MNT -o OPTS, or an fstab line of
type fuse.recfs), recfs is called as "recfs SRC MNT -o OPTS" and serves from
a background process unless -f is given. As with every file system under
mount(8), the mount is writable (rw) unless "ro" is given. Options:
  %s
Generic mount options (defaults, auto, noauto, user, users, nouser, _netdev,
nofail, dev, suid, atime, sync, x-systemd.*, ...) are accepted and left to
mount(8); any other option is an error.`, strings.Join(names, ", "))
}
