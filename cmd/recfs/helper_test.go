package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHelperArgs checks the translation of mount.fuse3's argv form into a
// mount command line: every -o option becomes its flag, generic mount(8)
// options are dropped, -f keeps the mount in the foreground, and unknown
// options are refused by name.
func TestHelperArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		err  string
	}{
		{[]string{"a.log", "/mnt", "-o", "ro,allow_other,dev,suid,exec,defaults"},
			[]string{"mount", "--daemon", "--rw=false", "--allow-other", "--noexec=false", "--", "a.log", "/mnt"}, ""},
		{[]string{"a.log", "/mnt", "-o", "rw,follow,backend=bazil,uid=1000,gid=1000,umask=022,cache_dir=/c,noauto,_netdev,x-systemd.automount,nofail,subtype=recfs,comment=x", "-f"},
			[]string{"mount", "--rw", "--follow", "--backend=bazil", "--uid=1000", "--gid=1000", "--umask=022", "--cache-dir=/c", "--", "a.log", "/mnt"}, ""},
		{[]string{"-orw", "a.log", "/mnt", "--xattrs"},
			[]string{"mount", "--daemon", "--rw", "--xattrs", "--", "a.log", "/mnt"}, ""},
		{[]string{"a.log", "/mnt", "-o", "ro,colour=blue,turbo,uid"}, nil, "colour=blue, turbo, uid"},
		{[]string{"a.log", "/mnt", "-o"}, nil, "-o needs"},
		{[]string{"a.log", "/mnt", "b", "-o", "ro"}, nil, "got 3 paths"},
	} {
		got, err := helperArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || exitCode(err) != exitUsage {
				t.Errorf("helperArgs(%q): %v; want usage error with %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("helperArgs(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

// TestHelperMode: the argv form is recognised only when the first word is a
// path, so a mistyped command is still reported as one.
func TestHelperMode(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "ev.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := recfs(t, "mout", "a", "b")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown command "mout"`) {
		t.Errorf("recfs mout a b: %d %q", r.code, r.stderr)
	}
	r = recfs(t, "ev.log", "mnt", "-o", "ro,bogus")
	if r.code != exitUsage || !strings.Contains(r.stderr, "unknown mount option(s): bogus") {
		t.Errorf("recfs ev.log mnt -o ro,bogus: %d %q", r.code, r.stderr)
	}
	r = recfs(t, "./missing.log", "mnt", "-o", "ro", "-f")
	if r.code != exitFailure || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("recfs ./missing.log mnt -o ro -f: %d %q", r.code, r.stderr)
	}
	r = recfs(t, "help", "mount")
	if r.code != exitOK || !strings.Contains(r.stdout, "fuse.recfs") {
		t.Errorf("recfs help mount: %d %q", r.code, r.stderr)
	}
}

// TestEveryMountFlagHasOption: each flag of recfs mount (but --daemon,
// which the helper decides with -f) has an -o form, so an fstab line can
// say anything the command line can.
func TestEveryMountFlagHasOption(t *testing.T) {
	have := map[string]bool{}
	for _, h := range helperOptions() {
		name, _, _ := strings.Cut(strings.TrimPrefix(h.flag, "--"), "=")
		have[name] = true
	}
	cmd := newMountCmd()
	check := func(f *pflag.Flag) {
		if f.Name == "daemon" || f.Name == "help" || f.Name == "json" {
			return
		}
		if !have[f.Name] {
			t.Errorf("mount flag --%s has no -o form", f.Name)
		}
	}
	cmd.Flags().VisitAll(check)
	newRootCmd(io.Discard, io.Discard).PersistentFlags().VisitAll(check)
}
