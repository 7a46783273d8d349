package mounting

import (
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
)

// The mount(8) helper convention: `mount -t fuse.recfs SRC MNT -o OPTS`
// (or an fstab line of type fuse.recfs) runs mount.fuse3, which runs the
// file system's program with the -o list, through /bin/sh, with PATH and
// HOME cleared. What follows is that convention's part that is no
// command's: which -o options are mount(8)'s own (HelperOptions leaves
// them out) and the environment the helper gets back (RestoreEnv).

// An Option is one option of a mount(8) -o list: "name" or "name=value".
type Option struct {
	Raw      string // as written
	Name     string // before the first "="
	Value    string // after it
	HasValue bool   // whether there is an "="
}

// genericOptions are mount(8) options that say nothing to a recfs mount:
// mount(8) and mount.fuse3 use them (auto, user, _netdev, x-systemd.*), or
// every recfs mount satisfies them (it is nodev and nosuid; times and sync
// modes do not apply to files that never change). A slice, not a map: it
// is static data, where a map would add this package to the lean link's
// initialised packages (test/e2e TestStartLeanStatic counts them).
var genericOptions = []string{
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group", "_netdev", "nofail",
	"dev", "nodev", "suid", "nosuid",
	"atime", "noatime", "relatime", "norelatime",
	"strictatime", "nostrictatime", "diratime", "nodiratime",
	"lazytime", "nolazytime", "sync", "async", "dirsync",
	"loud", "silent",
}

// genericPrefixes are option families mount(8) and systemd keep for
// themselves.
var genericPrefixes = []string{"x-", "comment=", "subtype=recfs"}

// HelperOptions splits a comma-separated -o list into its options, in
// order, leaving out empty ones and the generic options that mount(8),
// mount.fuse3 and systemd keep for themselves or that every recfs mount
// satisfies (defaults, noauto, user, _netdev, nosuid, noatime, sync,
// x-systemd.*, comment=..., ...; a generic name given a value, such as
// "user=x", is not generic).
func HelperOptions(list string) []Option {
	var opts []Option
	for _, o := range strings.Split(list, ",") {
		name, value, hasValue := strings.Cut(o, "=")
		if o == "" || slices.Contains(genericOptions, o) || slices.Contains(genericOptions, name) && !hasValue ||
			slices.ContainsFunc(genericPrefixes, func(p string) bool { return strings.HasPrefix(o, p) }) {
			continue
		}
		opts = append(opts, Option{Raw: o, Name: name, Value: value, HasValue: hasValue})
	}
	return opts
}

// systemPath is the search path mount.fuse3's shell uses when mount(8)
// has cleared PATH; the shell does not export it, so recfs sets it for the
// programs it runs (fusermount3).
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// RestoreEnv sets $PATH and $HOME when they are unset, as mount(8) leaves
// them for a helper: PATH becomes the system path (fusermount3 is found
// there), HOME the user database's (the default cache and log directories
// live under it), looked up as homeDir says.
func RestoreEnv() {
	if os.Getenv("PATH") == "" {
		_ = os.Setenv("PATH", systemPath)
	}
	if os.Getenv("HOME") != "" {
		return
	}
	if home := homeDir(user.Current, getentPasswd); home != "" {
		_ = os.Setenv("HOME", home)
	}
}

// homeDir returns the current user's home directory from lookup, else from
// getent's passwd entry of the user's uid: the lean recfs, linked without
// cgo, looks users up in /etc/passwd only, so a user known only through NSS
// (LDAP, sssd) is found by getent(1), which uses NSS. "" if neither knows.
func homeDir(lookup func() (*user.User, error), getent func(uid string) ([]byte, error)) string {
	if u, err := lookup(); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	out, err := getent(strconv.Itoa(os.Getuid()))
	if err != nil {
		return ""
	}
	return passwdHome(out)
}

// getentPasswd runs "getent passwd UID" and returns its output.
func getentPasswd(uid string) ([]byte, error) {
	return exec.Command("getent", "passwd", uid).Output()
}

// passwdHome returns the home directory field (the sixth) of the first
// line of a passwd(5) entry, "" when the line has not seven fields or the
// field is not an absolute path.
func passwdHome(entry []byte) string {
	line, _, _ := strings.Cut(string(entry), "\n")
	f := strings.Split(line, ":")
	if len(f) != 7 || !strings.HasPrefix(f[5], "/") {
		return ""
	}
	return f[5]
}
