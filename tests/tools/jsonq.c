/*
 * jsonq: a tiny JSON query for the shell tests (no jq on a fresh Debian).
 *
 *   jsonq PATH < file.json      print the value at PATH
 *   jsonq --lines < file.jsonl  check every line parses; print the count
 *
 * PATH is dotted: "strategies.0.name", "summary.allocations"; "" is the
 * root; a trailing ".#" prints an array's length.  Strings print bare,
 * everything else as compact JSON.  Exit 0, 1 when PATH is missing,
 * 2 when the input is not valid JSON (the message names line and column).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lines(void)
{
    char *line = NULL;
    size_t cap = 0;
    long n = 0, lineno = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) != -1) {
        lineno++;
        json_error_t err;
        json_t *v = json_loadb(line, (size_t)len, 0, &err);
        if (!v) {
            fprintf(stderr, "jsonq: line %ld: %s\n", lineno, err.text);
            free(line);
            return 2;
        }
        json_decref(v);
        n++;
    }
    free(line);
    printf("%ld\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: jsonq PATH < file.json | jsonq --lines < file.jsonl\n");
        return 2;
    }
    if (strcmp(argv[1], "--lines") == 0)
        return lines();
    json_error_t err;
    json_t *root = json_loadf(stdin, 0, &err);
    if (!root) {
        fprintf(stderr, "jsonq: line %d column %d: %s\n", err.line, err.column, err.text);
        return 2;
    }
    json_t *v = root;
    char *path = strdup(argv[1]);
    for (char *tok = strtok(path, "."); tok && v; tok = strtok(NULL, ".")) {
        if (strcmp(tok, "#") == 0) {
            if (!json_is_array(v)) {
                v = NULL;
                break;
            }
            printf("%zu\n", json_array_size(v));
            free(path);
            json_decref(root);
            return 0;
        }
        if (json_is_array(v)) {
            char *end;
            long i = strtol(tok, &end, 10);
            v = *end || i < 0 ? NULL : json_array_get(v, (size_t)i);
        } else {
            v = json_object_get(v, tok);
        }
    }
    free(path);
    if (!v) {
        fprintf(stderr, "jsonq: no value at \"%s\"\n", argv[1]);
        json_decref(root);
        return 1;
    }
    if (json_is_string(v)) {
        printf("%s\n", json_string_value(v));
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        printf("%s\n", s ? s : "");
        free(s);
    }
    json_decref(root);
    return 0;
}
