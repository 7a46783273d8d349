package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

func init() { registerCommand(newManCmd) }

// newManCmd makes the hidden `man DIR` command behind `make man`: one man
// page (section 1) per command, from the same text as --help.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write man pages (section 1) for every command into DIR",
		Long: `man writes one man page per command (recfs.1, recfs-mount.1, ...) into DIR,
made from the same text as --help; "make man" writes them to bin/man/man1,
read with "man -M bin/man recfs-mount".`,
		Example: `  recfs man /usr/local/share/man/man1`,
		Hidden:  true,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			var pages []string
			var walk func(c *cobra.Command) error
			walk = func(c *cobra.Command) error {
				if c.Hidden || c.Name() == "help" {
					return nil
				}
				name := strings.ReplaceAll(c.CommandPath(), " ", "-")
				path := filepath.Join(args[0], name+".1")
				if err := os.WriteFile(path, []byte(manPage(c)), 0o644); err != nil {
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
			root := cmd.Root()
			root.InitDefaultCompletionCmd()
			if err := walk(root); err != nil {
				return err
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), strings.Join(pages, "\n"))
			return err
		},
	}
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

// manPage renders the man page of c.
func manPage(c *cobra.Command) string {
	var b strings.Builder
	name := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"recfs %s\" \"recfs manual\"\n", strings.ToUpper(name), roff(version()))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", name, roff(c.Short))
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
		see = append(see, strings.ReplaceAll(c.Parent().CommandPath(), " ", "-")+"(1)")
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			see = append(see, strings.ReplaceAll(sub.CommandPath(), " ", "-")+"(1)")
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.String()
}
