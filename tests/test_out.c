/*
 * test_out.c — the output sink's escaping (DESIGN.md §7.1): text a message
 * carries (a Lease holder, a name, an error from the cluster) never ends its
 * line, opens or closes a group, or forges a workflow command; JSON mode
 * collects the message as it is (JSON has its own escaping).
 */
#include "core/out.h"
#include "core/rs.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

typedef struct t_buf {
    char text[4096];
    size_t len;
    int lines;
} t_buf;

static void t_write(void *ctx, const char *line, size_t len)
{
    t_buf *b = ctx;
    ck_assert_uint_lt(b->len + len, sizeof b->text);
    memcpy(b->text + b->len, line, len);
    b->len += len;
    b->text[b->len] = '\0';
    b->lines++;
}

/* Counts the lines of text that start (after blanks) with "::". */
static int t_commands(const char *text)
{
    int n = 0;
    for (const char *p = text; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (p[0] == ':' && p[1] == ':') n++;
        p += strcspn(p, "\r\n");
        p += strspn(p, "\r\n");
    }
    return n;
}

START_TEST(test_message_text_cannot_forge_a_command)
{
    t_buf b = {0};
    rs_out o;
    out_init(&o, (rs_out_sink){.write = t_write, .ctx = &b}, false);
    const char *holder = "x\n::error::FORGED-LF\r::warning::FORGED-CR%0A::error::FORGED-PCT";
    out_error(&o, "Lease held by %s", holder);
    ck_assert_int_eq(b.lines, 1);
    ck_assert_str_eq(b.text, "::error::Lease held by x%0A::error::FORGED-LF%0D::warning::FORGED-CR"
                             "%250A::error::FORGED-PCT\n");
    ck_assert_int_eq(t_commands(b.text), 1); /* the program's own ::error:: only */
    out_free(&o);
}
END_TEST

START_TEST(test_plain_line_never_starts_a_command)
{
    t_buf b = {0};
    rs_out o;
    out_init(&o, (rs_out_sink){.write = t_write, .ctx = &b}, false);
    out_info(&o, "%s", "::error::FORGED");
    out_info(&o, "%s", " \t::endgroup::");
    out_info(&o, "%s", "a :: in the middle stays");
    ck_assert_int_eq(b.lines, 3);
    ck_assert_int_eq(t_commands(b.text), 0);
    ck_assert_ptr_nonnull(strstr(b.text, "%3A:error::FORGED\n"));
    ck_assert_ptr_nonnull(strstr(b.text, "a :: in the middle stays\n"));
    out_free(&o);
}
END_TEST

START_TEST(test_group_title_is_escaped)
{
    t_buf b = {0};
    rs_out o;
    out_init(&o, (rs_out_sink){.write = t_write, .ctx = &b}, false);
    out_group_begin(&o, "Node %s", "n1\n::endgroup::");
    out_group_end(&o);
    ck_assert_str_eq(b.text, "::group::Node n1%0A::endgroup::\n::endgroup::\n");
    out_free(&o);
}
END_TEST

START_TEST(test_json_mode_collects_the_message_as_is)
{
    t_buf b = {0};
    rs_out o;
    out_init(&o, (rs_out_sink){.write = t_write, .ctx = &b}, true);
    out_error(&o, "held by %s", "a\nb%c");
    ck_assert_int_eq(b.lines, 0);
    ck_assert_str_eq(cJSON_GetArrayItem(o.errors, 0)->valuestring, "held by a\nb%c");
    out_free(&o);
}
END_TEST

START_TEST(test_escape_function)
{
    char *s = out_escape("100%\r\n", false);
    ck_assert_str_eq(s, "100%25%0D%0A");
    free(s);
    s = out_escape("::x", false); /* not at a line start: left as is */
    ck_assert_str_eq(s, "::x");
    free(s);
    s = out_escape(NULL, true);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

/* Every line the sink got, through out_plain_line, joined. */
static char *t_plain(const char *text)
{
    size_t cap = strlen(text) * 2 + 1, used = 0;
    char *all = calloc(1, cap);
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        char *line = out_plain_line(p, len);
        if (line) {
            ck_assert_uint_lt(used + strlen(line), cap);
            memcpy(all + used, line, strlen(line) + 1);
            used += strlen(line);
        }
        free(line);
        p += len + (p[len] == '\n');
    }
    return all;
}

/* Issue 30: outside a GitHub Actions step the program's own workflow
 * commands become plain words, and still no line starts a command. */
START_TEST(test_plain_form_of_every_command)
{
    t_buf b = {0};
    rs_out o;
    out_init(&o, (rs_out_sink){.write = t_write, .ctx = &b}, false);
    out_group_begin(&o, "Fence");
    out_notice(&o, "drift: %s", "variables-base");
    out_warning(&o, "100%% of %s", "x\n::error::FORGED");
    out_error(&o, "held by %s", "y\r::endgroup::");
    out_info(&o, "%s", "::warning::FORGED-INFO");
    out_group_end(&o);
    char *plain = t_plain(b.text);
    ck_assert_str_eq(plain, "==> Fence\n"
                            "notice: drift: variables-base\n"
                            "warning: 100%25 of x%0A::error::FORGED\n"
                            "error: held by y%0D::endgroup::\n"
                            "%3A:warning::FORGED-INFO\n");
    ck_assert_int_eq(t_commands(plain), 0);
    free(plain);
    out_free(&o);
}
END_TEST

START_TEST(test_plain_line_edges)
{
    ck_assert_ptr_null(out_plain_line("::endgroup::\n", 13));
    char *s = out_plain_line("  ::set-output name=x::y", 24); /* not ours: still no command */
    ck_assert_str_eq(s, "  %3A:set-output name=x::y\n");
    free(s);
    s = out_plain_line("::error::", 9);
    ck_assert_str_eq(s, "error: \n");
    free(s);
    s = out_plain_line("::errorx::y\r\n", 13); /* no such command of ours */
    ck_assert_str_eq(s, "%3A:errorx::y\n");
    free(s);
    s = out_plain_line("", 0);
    ck_assert_str_eq(s, "\n");
    free(s);
}
END_TEST

static Suite *out_suite(void)
{
    Suite *s = suite_create("out");
    TCase *tc = tcase_create("escape");
    tcase_add_test(tc, test_message_text_cannot_forge_a_command);
    tcase_add_test(tc, test_plain_line_never_starts_a_command);
    tcase_add_test(tc, test_group_title_is_escaped);
    tcase_add_test(tc, test_json_mode_collects_the_message_as_is);
    tcase_add_test(tc, test_escape_function);
    tcase_add_test(tc, test_plain_form_of_every_command);
    tcase_add_test(tc, test_plain_line_edges);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(out_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
