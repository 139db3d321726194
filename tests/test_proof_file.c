/*
 * test_proof_file.c — the runtime proof as data and as a file: the core
 * records it once per cutover attempt without touching the disk (a restarted
 * round must not trip over its own proof), hands it over only on success,
 * and cli/ writes it atomically — mode 0600, never over an existing file,
 * never through a symlink, and no temp file survives a failed write.
 */
#include "cli/cli.h"
#include "core/txn_int.h"

#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char t_dir[64];

static void t_setup(void)
{
    snprintf(t_dir, sizeof t_dir, "/tmp/reassert-proof-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t_dir));
}

static size_t t_entries(void)
{
    DIR *d = opendir(t_dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static void t_teardown(void)
{
    DIR *d = opendir(t_dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", t_dir, de->d_name);
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) unlink(p);
    }
    if (d) closedir(d);
    rmdir(t_dir);
}

START_TEST(test_proof_written_once_with_mode_0600)
{
    char path[128];
    snprintf(path, sizeof path, "%s/proof.json", t_dir);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(cli_proof_write(path, "{\"version\":1}", &e) == RS_OK, "%s", e.msg);
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    ck_assert_uint_eq(t_entries(), 1); /* no temp file beside it */
    char why[128];
    char *text = cli_proof_read(path, NULL, why, sizeof why);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "{\"version\":1}\n");
    free(text);
}
END_TEST

START_TEST(test_proof_never_overwrites_a_file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/proof.json", t_dir);
    rs_err e;
    rs_err_clear(&e);
    ck_assert(cli_proof_write(path, "first", &e) == RS_OK);
    ck_assert_int_eq(cli_proof_write(path, "second", &e), RS_FAILED);
    ck_assert_ptr_nonnull(strstr(e.msg, "an existing file is never overwritten"));
    char why[128];
    char *text = cli_proof_read(path, NULL, why, sizeof why);
    ck_assert_str_eq(text, "first\n");
    free(text);
    ck_assert_uint_eq(t_entries(), 1);
}
END_TEST

START_TEST(test_proof_path_that_is_a_symlink_is_refused)
{
    char path[128], target[128];
    snprintf(path, sizeof path, "%s/proof.json", t_dir);
    snprintf(target, sizeof target, "%s/elsewhere.json", t_dir);
    ck_assert_int_eq(symlink(target, path), 0);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_int_eq(cli_proof_write(path, "{}", &e), RS_FAILED);
    ck_assert_ptr_nonnull(strstr(e.msg, "symbolic link"));
    struct stat st;
    ck_assert_int_ne(lstat(target, &st), 0); /* nothing written through it */
    ck_assert_uint_eq(t_entries(), 1);       /* only the symlink */
    /* Reading never follows one either. */
    char why[128];
    ck_assert_ptr_null(cli_proof_read(path, NULL, why, sizeof why));
}
END_TEST

/* DESIGN §5.1: a FIFO nobody writes is refused, never waited on in
 * open(); a directory and a device are refused too, and told apart from a
 * missing file (the caller's warning: verify fully). */
START_TEST(test_proof_read_refuses_what_is_not_a_regular_file)
{
    char fifo[128], dir[128], missing[128], why[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", t_dir);
    snprintf(dir, sizeof dir, "%s/dir", t_dir);
    snprintf(missing, sizeof missing, "%s/missing.json", t_dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    const char *paths[] = {fifo, dir, "/dev/null"};
    const char *whys[] = {"(a FIFO)", "it is a directory", "(a device)"};
    for (size_t i = 0; i < 3; i++) {
        bool irregular = false;
        ck_assert_ptr_null(cli_proof_read(paths[i], &irregular, why, sizeof why));
        ck_assert_msg(irregular, "%s", paths[i]);
        ck_assert_msg(strstr(why, whys[i]) != NULL, "%s: %s", paths[i], why);
    }
    bool irregular = true;
    ck_assert_ptr_null(cli_proof_read(missing, &irregular, why, sizeof why));
    ck_assert(!irregular);
    rmdir(dir);
}
END_TEST

START_TEST(test_failed_proof_write_leaves_no_temp_file)
{
    /* A file-size limit makes the write fail after the temp file exists. It
     * is set in a child of our own, so it never reaches the test harness
     * (which may run every test in one process). */
    char path[128];
    snprintf(path, sizeof path, "%s/proof.json", t_dir);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {.rlim_cur = 8, .rlim_max = RLIM_INFINITY};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(2);
        static char big[4096];
        memset(big, 'x', sizeof big - 1);
        rs_err e;
        rs_err_clear(&e);
        rs_code c = cli_proof_write(path, big, &e);
        _exit(c == RS_FAILED && strstr(e.msg, "writing") ? 0 : 3);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert_uint_eq(t_entries(), 0);
}
END_TEST

START_TEST(test_restarted_round_records_the_proof_again_without_error)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_options opt = {.record_proof_path = "/nonexistent/proof.json",
                      .strategy = rs_strategy_default()};
    rs_txn *tx = rs_xcalloc(1, sizeof *tx);
    tx->cfg = &cfg;
    tx->opt = &opt;
    snprintf(tx->revision, sizeof tx->revision, "%s", "r1");
    tx->proof_nodes = cJSON_CreateArray();
    /* Two cutover attempts (the first restarted): the core never opens the
     * path, so the second cannot fail with "File exists". */
    ck_assert_int_eq(proof_record(tx), TX_OK);
    ck_assert_int_eq(proof_record(tx), TX_OK);
    rs_result res = {.exit = RS_OK};
    proof_hand_over(tx, &res);
    ck_assert_ptr_nonnull(res.proof_recorded);
    ck_assert_ptr_nonnull(strstr(res.proof_recorded, "\"revision\":\t\"r1\""));
    free(res.proof_recorded);
    /* A failed run hands nothing over. */
    ck_assert_int_eq(proof_record(tx), TX_OK);
    rs_result failed = {.exit = RS_FAILED};
    proof_hand_over(tx, &failed);
    ck_assert_ptr_null(failed.proof_recorded);
    cJSON_Delete(tx->proof_nodes);
    free(tx);
    rs_config_free(&cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proof_file");
    TCase *tc = tcase_create("proof");
    tcase_add_checked_fixture(tc, t_setup, t_teardown);
    tcase_add_test(tc, test_proof_written_once_with_mode_0600);
    tcase_add_test(tc, test_proof_never_overwrites_a_file);
    tcase_add_test(tc, test_proof_path_that_is_a_symlink_is_refused);
    tcase_add_test(tc, test_proof_read_refuses_what_is_not_a_regular_file);
    tcase_add_test(tc, test_failed_proof_write_leaves_no_temp_file);
    tcase_add_test(tc, test_restarted_round_records_the_proof_again_without_error);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
