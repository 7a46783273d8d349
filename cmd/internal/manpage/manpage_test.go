package manpage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// tree is a small command tree: a root with a flag, a visible command with
// a flag of its own and examples, a hidden one and cobra's help.
func tree() (root, sub *cobra.Command) {
	root = &cobra.Command{Use: "tool", Short: `Do \things`}
	root.PersistentFlags().Bool("json", false, "print JSON")
	sub = &cobra.Command{Use: "run FILE", Short: "Run a file", Long: "run runs FILE.\n.not a request\n'nor this", Example: "  tool run x", Run: func(*cobra.Command, []string) {}}
	sub.Flags().Int("n", 1, "times")
	hidden := &cobra.Command{Use: "secret", Short: "hidden", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub, hidden)
	root.InitDefaultHelpCmd()
	return root, sub
}

// TestRoff: backslashes become \e and lines that would read as requests
// are guarded by \&.
func TestRoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{`a\b`, `a\eb`},
		{".TH x", `\&.TH x`},
		{"a\n.b\n'c\nd.e", "a\n\\&.b\n\\&'c\nd.e"},
		{"x. 'y", "x. 'y"},
	} {
		if got := roff(tc.in); got != tc.want {
			t.Errorf("roff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPage: a page has the title line of its header, every section the
// command's help has and none it has not, and SEE ALSO names the parent
// and the visible commands only.
func TestPage(t *testing.T) {
	t.Parallel()
	root, sub := tree()
	h := Header{Source: "tool v1", Manual: "tool manual"}
	p := Page(sub, h)
	for _, want := range []string{
		".TH TOOL-RUN 1 \"\" \"tool v1\" \"tool manual\"\n.SH NAME\ntool-run \\- Run a file\n",
		".SH SYNOPSIS\n.nf\ntool run FILE [flags]\n.fi\n",
		".SH DESCRIPTION\n.nf\nrun runs FILE.\n\\&.not a request\n\\&'nor this\n.fi\n",
		".SH OPTIONS\n.nf\n", "--n int", ".SH GLOBAL OPTIONS\n.nf\n", "--json",
		".SH EXAMPLES\n.nf\n  tool run x\n.fi\n", ".SH SEE ALSO\ntool(1)\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("page of tool run lacks %q:\n%s", want, p)
		}
	}
	r := Page(root, h)
	if !strings.Contains(r, ".SH DESCRIPTION\n.nf\nDo \\ethings\n.fi\n") || strings.Contains(r, "EXAMPLES") || strings.Contains(r, "GLOBAL OPTIONS") {
		t.Errorf("page of tool: want Short as the description, no examples, no global options:\n%s", r)
	}
	if !strings.HasSuffix(r, ".SH SEE ALSO\ntool-run(1)\n") {
		t.Errorf("page of tool: SEE ALSO names more or less than tool-run:\n%s", r)
	}
}

// TestWriteAll: one file per visible command, listed in walk order, each
// holding its page.
func TestWriteAll(t *testing.T) {
	t.Parallel()
	root, sub := tree()
	dir := filepath.Join(t.TempDir(), "man1")
	h := Header{Source: "tool v1", Manual: "tool manual"}
	pages, err := WriteAll(root, dir, h)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "tool.1"), filepath.Join(dir, "tool-run.1")}
	if strings.Join(pages, " ") != strings.Join(want, " ") {
		t.Fatalf("WriteAll wrote %q, want %q", pages, want)
	}
	got, err := os.ReadFile(want[1])
	if err != nil || string(got) != Page(sub, h) {
		t.Errorf("tool-run.1: %v, or not its page:\n%s", err, got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in %s, want 2", len(ents), dir)
	}
}

// TestWriteAllUnwritable: a directory that cannot be made is an error and
// no list.
func TestWriteAllUnwritable(t *testing.T) {
	t.Parallel()
	root, _ := tree()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if pages, err := WriteAll(root, filepath.Join(file, "man1"), Header{}); err == nil || len(pages) != 0 {
		t.Errorf("WriteAll under a file: %q, %v; want an error and no pages", pages, err)
	}
}

// FuzzRoff: no escaped line reads as a request, every backslash is an
// escape, and unescaping gives the text back.
func FuzzRoff(f *testing.F) {
	f.Add("a\\b\n.c\n'd")
	f.Fuzz(func(t *testing.T, s string) {
		out := roff(s)
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
				t.Fatalf("roff(%q) has a request line %q", s, l)
			}
		}
		back := strings.ReplaceAll(strings.TrimPrefix(out, `\&`), "\n\\&", "\n")
		if back = strings.ReplaceAll(back, `\e`, `\`); back != s {
			t.Fatalf("roff(%q) = %q does not read back (%q)", s, out, back)
		}
	})
}
