package main

import "flag"

// parseInterspersed parses args with fs, letting flags come before, between
// and after the positional arguments (`vigil check DIR --check-timeout 1m`),
// and returns the positional ones in order. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		// flag stops at "--" or at the first non-flag: after "--" all is
		// positional.
		if len(rest) > len(fs.Args()) && rest[len(rest)-len(fs.Args())-1] == "--" {
			return append(pos, fs.Args()...), nil
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}
