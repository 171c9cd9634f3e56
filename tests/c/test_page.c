/* test_page.c - the data of sonde view's page for the writers' fixture. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"
#include "page/view.h"

/* The data of sonde view's page for the fixture: strings escaped for the
 * <script> element, how it was taken, each file once, the tree with
 * sonde_flame_layout's places, each thread's own tree, stats, edges. */
static const char page_data_want[] =
    "{\"kind\": \"profile\", \"title\": \"app \\u003cx\\u003e.json\", \"unit\": \"seconds\", "
    "\"sampled\": false, \"exact_tree\": true,\n"
    "\"about\": {\"rate\": 0, \"pid\": 0, \"threads\": [\"MainThread\",\"pool \\\"A\\\"\"], "
    "\"run\": {}},\n"
    "\"files\": [\n"
    "\"app.py\",\n"
    "\"~\"],\n"
    "\"funcs\": [\n"
    "[\"main\",0,1,\"#f79053\"],\n"
    "[\"Worker.work\",0,5,\"#efc234\"],\n"
    "[\"\\u003cbuilt-in method builtins.len\\u003e\",1,0,\"#ce7055\"]],\n"
    "\"tree\": [\n"
    "[-1,0,12,0,0],\n"
    "[0,0,10,2.5,2],\n"
    "[1,1,7.5,6,2],\n"
    "[2,2,1.5,1.5,2],\n"
    "[1,0,2,1.5,0],\n"
    "[1,4,0.5,0.5,0]],\n"
    "\"thread_trees\": [\n"
    "{\"name\": \"MainThread\", \"tree\": [\n"
    "[-1,0,10,0,0],\n"
    "[0,0,10,2.5,0],\n"
    "[1,1,7.5,6,0],\n"
    "[2,2,1.5,1.5,0]]},\n"
    "{\"name\": \"pool \\\"A\\\"\", \"tree\": [\n"
    "[-1,0,2,0,0],\n"
    "[1,0,2,1.5,0],\n"
    "[1,1,0.5,0.5,0]]}],\n"
    "\"stats\": [\n"
    "[0,1,1,2.5,10],\n"
    "[1,4,3,8,9.5],\n"
    "[2,4,4,1.5,1.5]],\n"
    "\"edges\": [\n"
    "[0,1,2,6,7.5],\n"
    "[1,2,4,1.5,1.5],\n"
    "[1,1,1,0.5,0.5]]}";

static void test_page_data(void)
{
    sonde_profile p;
    sonde_stats s;
    sonde_profile_init(&p);
    sonde_stats_init(&s);
    fixture_app(&p, &s);
    sonde_buf b;
    sonde_buf_init(&b);
    check(sonde_view_profile_write(&b, "app <x>.json", &p, &s, 1, 0) == 0, "page written");
    const char *data = strstr(b.data, "<script type=\"application/json\" id=\"data\">");
    const char *end = data ? strstr(data, "</script>") : NULL;
    check(data && end, "the page holds its data");
    if (data && end) {
        data += strlen("<script type=\"application/json\" id=\"data\">");
        char *got = strndup(data, (size_t)(end - data));
        check_str(got, page_data_want);
        free(got);
    }
    check(strstr(b.data, "Content-Security-Policy\" content=\"default-src 'none';") != NULL,
          "requests forbidden");
    sonde_buf_free(&b);
    sonde_stats_free(&s);
    sonde_profile_free(&p);
}

void test_page(void)
{
    test_page_data();
}
