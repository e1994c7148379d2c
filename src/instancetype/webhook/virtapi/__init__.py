"""virt-api's subresource API (`subresources.kubevirt.io/v1`) served over a Store: `app.VirtAPI`
(the HTTP routes), `actions` (what start, stop, restart and the expansions do, through the
controller and the engine), `auth` (front-proxy authentication, SubjectAccessReviews),
`discovery` (the documents clients read first)."""
