package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/cmd/internal/manpage"
)

// manFlags are the flags of `recfs man`.
type manFlags struct {
	install bool
}

// newManCmd makes `recfs man`: the man page (section 1) of a command on
// standard output, every page into a directory, or installed where man(1)
// finds them.
func newManCmd() *cobra.Command {
	f := &manFlags{}
	cmd := &cobra.Command{
		Use:   "man [COMMAND | DIR] | man --install",
		Short: "Print or install the man pages (section 1) of recfs and its commands",
		Long: `man prints the man page of recfs, or of COMMAND, on standard output, made
from the same text as --help: read it with "recfs man mount | man -l -".

With DIR (any argument that is not a command) it writes one page per
command (recfs.1, recfs-mount.1, ...) into DIR; "make man" writes them to
bin/man/man1, read with "man -M bin/man recfs-mount". --install writes them
where man finds them: /usr/local/share/man/man1 as root, else
$XDG_DATA_HOME/man/man1 (~/.local/share/man/man1); then "man recfs-mount"
works.`,
		Example: `  recfs man | man -l -
  recfs man mount | man -l -
  sudo recfs man --install && man recfs-cat`,
		Args: cobra.MaximumNArgs(1),
	}
	cmd.Flags().BoolVar(&f.install, "install", false, "write every page where man(1) finds them")
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// validate refuses --install with an operand: --install writes every
// page to its own place.
func (f *manFlags) validate(_ *cobra.Command, args []string) (struct{}, error) {
	if f.install && len(args) > 0 {
		return struct{}{}, usagef("--install writes every page to its place; give no COMMAND or DIR")
	}
	return struct{}{}, nil
}

// run prints the page of recfs (no operand) or of the command args name,
// or writes every page into the directory args name or, with --install,
// where man finds them.
func (f *manFlags) run(cmd *cobra.Command, args []string, _ struct{}) error {
	root := cmd.Root()
	root.InitDefaultCompletionCmd()
	switch {
	case f.install:
		dir, err := manInstallDir()
		if err != nil {
			return err
		}
		return writeManPages(cmd, root, dir)
	case len(args) == 0:
		_, err := io.WriteString(cmd.OutOrStdout(), manpage.Page(root, manHeader()))
		return err
	}
	if c, rest, err := root.Find(strings.Fields(args[0])); err == nil && c != root && len(rest) == 0 {
		_, err := io.WriteString(cmd.OutOrStdout(), manpage.Page(c, manHeader()))
		return err
	}
	return writeManPages(cmd, root, args[0])
}

// manInstallDir is where man --install writes: the system's local man
// pages as root, else the user's (man finds ~/.local/share/man through
// ~/.local/bin on PATH, and XDG_DATA_HOME's where set).
var manInstallDir = func() (string, error) {
	if os.Geteuid() == 0 {
		return "/usr/local/share/man/man1", nil
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "man", "man1"), nil
}

// writeManPages writes the page of every visible command under root into
// dir and lists the files written.
func writeManPages(cmd, root *cobra.Command, dir string) error {
	pages, err := manpage.WriteAll(root, dir, manHeader())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), strings.Join(pages, "\n"))
	return err
}

// manHeader is what the title line of every page says.
func manHeader() manpage.Header {
	return manpage.Header{Source: "recfs " + version(), Manual: "recfs manual"}
}
