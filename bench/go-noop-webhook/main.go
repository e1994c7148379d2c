// noopwebhook PORT CERT KEY: answers every AdmissionReview v1 POSTed to it with
// `allowed: true` (no patch), over HTTPS on 127.0.0.1:PORT, as any webhook must at least do:
// read the review, find its uid, write the answer.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
)

type review struct {
	Request struct {
		UID string `json:"uid"`
	} `json:"request"`
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: noopwebhook PORT CERT KEY")
		os.Exit(2)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var in review
		if err == nil {
			err = json.Unmarshal(body, &in)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": in.Request.UID, "allowed": true}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
	err := http.ListenAndServeTLS("127.0.0.1:"+os.Args[1], os.Args[2], os.Args[3], nil)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
