package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/decoders"
)

// TestReadmeListsEveryMountOption: the README's list of -o options names
// exactly the options the mount helper accepts (helperOptions), so
// neither can grow without the other; and each maps to a flag of mount.
func TestReadmeListsEveryMountOption(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "Every mount flag has an `-o` form:")
	if !ok {
		t.Fatal("README has no paragraph 'Every mount flag has an `-o` form:'")
	}
	para, _, ok := strings.Cut(rest, "(`default_permissions`")
	if !ok {
		t.Fatal("the README's -o list does not end with its (`default_permissions` ...) note")
	}
	var listed []string
	for _, m := range regexp.MustCompile("`([a-z0-9_]+)(=[^`]*)?`").FindAllStringSubmatch(para, -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(listed)
	var accepted []string
	for name := range helperOptions() {
		if name != "default_permissions" && name != "exec" { // in the note that ends the list
			accepted = append(accepted, name)
		}
	}
	slices.Sort(accepted)
	if !slices.Equal(listed, accepted) {
		for _, n := range accepted {
			if !slices.Contains(listed, n) {
				t.Errorf("-o %s is accepted but the README does not list it", n)
			}
		}
		for _, n := range listed {
			if !slices.Contains(accepted, n) {
				t.Errorf("the README lists -o %s, which recfs refuses", n)
			}
		}
	}
	mount, _, err := newRootCmd(nil, nil).Find([]string{"mount"})
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range helperOptions() {
		flag, _, _ := strings.Cut(strings.TrimPrefix(o.flag, "--"), "=")
		if flag != "" && mount.Flags().Lookup(flag) == nil && mount.InheritedFlags().Lookup(flag) == nil && mount.Root().PersistentFlags().Lookup(flag) == nil {
			t.Errorf("-o %s maps to --%s, which mount does not have", name, flag)
		}
	}
}

// TestHelpNamesEverything: recfs --help names every format, the S3
// sources, every decoder, sample and man; man is a listed command that
// prints a page on standard output.
func TestHelpNamesEverything(t *testing.T) {
	t.Parallel()
	help := mustRun(t, "--help")
	want := append(append(formatNames(), "s3://bucket/key", "recfs sample DIR", "recfs man"), decoders.Names()...)
	for _, w := range want {
		if !strings.Contains(help, w) {
			t.Errorf("recfs --help does not name %q", w)
		}
	}
	if !regexp.MustCompile(`(?m)^  man +Print or install the man pages`).MatchString(help) {
		t.Errorf("recfs --help does not list the man command:\n%s", help)
	}
	if out := mustRun(t, "man"); !strings.HasPrefix(out, ".TH RECFS 1 ") {
		t.Errorf("recfs man: %.80q", out)
	}
	if out := mustRun(t, "man", "mount"); !strings.HasPrefix(out, ".TH RECFS-MOUNT 1 ") || !strings.Contains(out, "--follow") {
		t.Errorf("recfs man mount: %.80q", out)
	}
}

// TestManInstall: man --install writes every page into the directory man
// finds them in.
func TestManInstall(t *testing.T) {
	dir := t.TempDir()
	old := manInstallDir
	manInstallDir = func() (string, error) { return dir, nil }
	t.Cleanup(func() { manInstallDir = old })
	out := mustRun(t, "man", "--install")
	for _, page := range []string{"recfs.1", "recfs-cat.1", "recfs-mount.1", "recfs-man.1"} {
		if !strings.Contains(out, dir+"/"+page+"\n") {
			t.Errorf("man --install did not list %s:\n%s", page, out)
		}
		if b, err := os.ReadFile(dir + "/" + page); err != nil || !strings.HasPrefix(string(b), ".TH ") {
			t.Errorf("%s: %v %.40q", page, err, b)
		}
	}
	if r := recfs(t, "man", "--install", "mount"); r.code != exitUsage {
		t.Errorf("man --install mount: exit %d", r.code)
	}
}
