// Package manpage renders man pages (section 1) of cobra commands from the
// text their --help shows: the short and long descriptions, the usage
// line, the flags, the examples, and the parent and subcommands as SEE
// ALSO. Pages are plain roff with no-fill sections, so the help text's own
// line breaks and indentation survive.
package manpage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Header is what every page's title line (.TH) says besides the page's
// name and section.
type Header struct {
	Source string // the program and its version ("recfs v1.2")
	Manual string // the manual's title ("recfs manual")
}

// name returns the page name of c: its command path with dashes
// ("recfs-mount").
func name(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// Page renders the man page of c.
func Page(c *cobra.Command, h Header) string {
	var b strings.Builder
	page := name(c)
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"%s\" \"%s\"\n", strings.ToUpper(page), roff(h.Source), roff(h.Manual))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", page, roff(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.nf\n%s\n.fi\n", roff(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.nf\n%s\n.fi\n", roff(desc))
	if f := c.NonInheritedFlags().FlagUsages(); f != "" {
		fmt.Fprintf(&b, ".SH OPTIONS\n.nf\n%s.fi\n", roff(f))
	}
	if f := c.InheritedFlags().FlagUsages(); f != "" {
		fmt.Fprintf(&b, ".SH GLOBAL OPTIONS\n.nf\n%s.fi\n", roff(f))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLES\n.nf\n%s\n.fi\n", roff(c.Example))
	}
	var see []string
	if c.HasParent() {
		see = append(see, name(c.Parent())+"(1)")
	}
	for _, sub := range c.Commands() {
		if paged(sub) {
			see = append(see, name(sub)+"(1)")
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.String()
}

// paged reports whether c has a page: it is not hidden, nor cobra's help
// command.
func paged(c *cobra.Command) bool { return !c.Hidden && c.Name() != "help" }

// WriteAll writes the page of root and of every command under it that has
// one into dir (NAME.1, made if missing) and returns the paths written, in
// the order of a depth-first walk from root.
func WriteAll(root *cobra.Command, dir string, h Header) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var pages []string
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !paged(c) {
			return nil
		}
		path := filepath.Join(dir, name(c)+".1")
		if err := os.WriteFile(path, []byte(Page(c, h)), 0o644); err != nil {
			return err
		}
		pages = append(pages, path)
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return pages, walk(root)
}

// roff escapes text for a man page body: backslashes, and lines that would
// read as requests.
func roff(text string) string {
	text = strings.ReplaceAll(text, `\`, `\e`)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
