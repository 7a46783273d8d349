package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCommandNames wants each registered command's name to be the name its
// constructor gives it, once: commandsFor picks a command by that name.
func TestCommandNames(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, c := range commandsFor(nil) {
		if got := c.build().Name(); got != c.name {
			t.Errorf("command registered as %q is named %q", c.name, got)
		}
		if seen[c.name] {
			t.Errorf("command %q registered twice", c.name)
		}
		seen[c.name] = true
	}
	if len(seen) != len(newRootCmd(io.Discard, io.Discard).Commands()) {
		t.Errorf("%d commands registered, the tree has %d", len(seen), len(newRootCmd(io.Discard, io.Discard).Commands()))
	}
}

func TestCommandsFor(t *testing.T) {
	t.Parallel()
	all := len(commandsFor(nil))
	for _, tc := range []struct {
		args []string
		want []string // nil: every command
		none bool
	}{
		{args: []string{"cat", "f", "0"}, want: []string{"cat"}},
		{args: []string{"append", "--lines", "f"}, want: []string{"append"}},
		{args: []string{"serve", "http", "--help"}, want: []string{"serve"}},
		{args: []string{"--version"}, none: true},
		{args: nil},
		{args: []string{"--help"}},
		{args: []string{"--version", "--help"}},
		{args: []string{"--verbose", "cat", "f"}},
		{args: []string{"help", "cat"}},
		{args: []string{"man", "cat"}},
		{args: []string{"umount", "d"}}, // an alias
		{args: []string{"completion", "bash"}},
		{args: []string{cobra.ShellCompRequestCmd, "cat", ""}},
		{args: []string{"catt"}},
	} {
		got := commandsFor(tc.args)
		var names []string
		for _, c := range got {
			names = append(names, c.name)
		}
		switch {
		case tc.none && len(got) != 0:
			t.Errorf("%q: builds %q, want none", tc.args, names)
		case tc.want != nil && !slices.Equal(names, tc.want):
			t.Errorf("%q: builds %q, want %q", tc.args, names, tc.want)
		case tc.want == nil && !tc.none && len(got) != all:
			t.Errorf("%q: builds %q, want all %d", tc.args, names, all)
		}
	}
}

// TestPartialTreeSameOutput runs command lines through run, which builds
// only the commands a line needs, and through the whole tree, and wants
// the same exit status, standard output and standard error: help, usage
// errors, completion and man pages of every command. It runs in a scratch
// directory: a "man WORD" whose WORD is no command writes pages into WORD.
func TestPartialTreeSameOutput(t *testing.T) {
	t.Chdir(t.TempDir())
	lines := [][]string{
		{}, {"--help"}, {"-h"}, {"--version"}, {"--version", "--help"}, {"--version", "x"},
		{"help"}, {"bogus"}, {"inf"}, {"--verbose", "info"}, {"completion", "bash"},
		{"completion", "zsh"}, {"completion", "fish"}, {"man"},
		{cobra.ShellCompRequestCmd, ""}, {cobra.ShellCompRequestCmd, "c"},
		{"serve", "bogus"},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		p := strings.Fields(c.CommandPath())[1:]
		lines = append(lines,
			append(slices.Clone(p), "--help"), append(slices.Clone(p), "-h"), p,
			append(slices.Clone(p), "--nosuch"), append(slices.Clone(p), "--json"),
			append([]string{"help"}, p...), append([]string{"man"}, p...),
			append(append([]string{cobra.ShellCompRequestCmd}, p...), "-"),
			append(append([]string{cobra.ShellCompRequestCmd}, p...), "--"),
		)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, c := range newRootCmd(io.Discard, io.Discard).Commands() {
		walk(c)
	}
	for _, args := range lines {
		var out, errb, fout, ferrb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		fcode := runTree(context.Background(), newRootCmd(&fout, &ferrb), args, &ferrb)
		if code != fcode || out.String() != fout.String() || errb.String() != ferrb.String() {
			t.Errorf("recfs %q: exit %d, stdout %d bytes, stderr %q; the whole tree: exit %d, stdout %d bytes, stderr %q",
				args, code, out.Len(), errb.String(), fcode, fout.Len(), ferrb.String())
		}
	}
}

// namedStartAllocs bounds the allocations of a command line that starts
// with a command's name, up to that command's own work: the root and the
// one command built, cobra's flag parsing and argument check. The root's
// description (formats and decoders), version (build information) and
// completion command cost 136 more; the line below runs in 106.
const namedStartAllocs = 150

// TestNamedCommandStartAllocs counts what `recfs append` with no operand
// (a usage error, before any file is opened) allocates: the root's work
// of every start, which a one-record append pays too.
func TestNamedCommandStartAllocs(t *testing.T) {
	got := testing.AllocsPerRun(20, func() {
		if code := run(context.Background(), []string{"append"}, io.Discard, io.Discard); code != exitUsage {
			t.Fatalf("recfs append: exit %d, want %d", code, exitUsage)
		}
	})
	if got > namedStartAllocs {
		t.Errorf("recfs append (usage error) allocates %.0f times, limit %d: is the root building what only its own help needs?", got, namedStartAllocs)
	}
}
