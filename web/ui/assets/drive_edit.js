// Atrium web app: the editor page. The server rendered a form that POSTs the
// edit session's access token to the online editor, into the page's frame
// (the WOPI way: the token stays out of every URL); this script submits it.
"use strict";
(function () {
  var form = document.getElementById("editor-form");
  if (form) { form.submit(); }
})();
