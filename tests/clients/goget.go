// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// goget: an HTTP GET the way a Go tool makes one, for the real-client suite
// (built twice: CGO_ENABLED=0 with Go's own resolver, and with -tags netcgo
// through libc's getaddrinfo).
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	resp, err := http.Get(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "goget:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(string(b))
}
