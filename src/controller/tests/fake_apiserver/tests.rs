use super::*;

#[test]
fn queries_are_decoded() {
    assert_eq!(
        decode_query("&labelSelector=app%3Dweb%2Ctier+in+%28a%29&x"),
        vec![
            (
                "labelSelector".to_string(),
                "app=web,tier in (a)".to_string()
            ),
            ("x".to_string(), String::new())
        ]
    );
    assert_eq!(percent_decode("100%"), "100%");
    assert_eq!(percent_decode("%zz"), "%zz");
}

#[test]
fn a_star_matches_one_segment() {
    assert!(path_matches("/a/*/c", "/a/b/c"));
    assert!(!path_matches("/a/*/c", "/a/b/d"));
    assert!(!path_matches("/a/*", "/a/b/c"));
    assert!(!path_matches("/a/*", "/a/"));
}

#[test]
fn inclusion_names_the_differing_path() {
    let actual = json!({"a": {"b": [1, {"c": 2, "d": 3}]}, "e": "x"});
    assert!(includes(&actual, &json!({"a": {"b": [1, {"c": 2}]}}), "").is_ok());
    assert!(includes(&actual, &json!({"gone": null}), "").is_ok());
    assert_eq!(
        includes(&actual, &json!({"a": {"b": [1, {"c": 5}]}}), ""),
        Err("/a/b/1/c: 2, expected 5".to_string())
    );
    assert!(includes(&actual, &json!({"a": {"b": [1]}}), "").is_err());
    assert!(includes(&actual, &json!({"f": 1}), "").is_err());
}

async fn get_configmap(client: kube::Client) -> Result<(), kube::Error> {
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client, "default");
    api.get("a").await.map(drop)
}

fn one_get() -> Scenario {
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, "/api/v1/namespaces/default/configmaps/a")
        .reply(ok(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
        ));
    scenario
}

#[tokio::test]
async fn the_expected_request_is_answered() {
    let (client, server) = one_get().start();
    get_configmap(client).await.unwrap();
    assert_eq!(server.finish().await.len(), 1);
}

#[tokio::test]
#[should_panic(expected = "request 1 of 1 is not the expected one")]
async fn a_different_request_fails_naming_both() {
    let (client, server) = one_get().start();
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client, "default");
    let _ = api.get("b").await;
    drop(api);
    server.finish().await;
}

#[tokio::test]
#[should_panic(expected = "unexpected request 2")]
async fn a_request_after_the_last_fails() {
    let (client, server) = one_get().start();
    get_configmap(client.clone()).await.unwrap();
    let _ = get_configmap(client).await;
    server.finish().await;
}

#[tokio::test]
#[should_panic(expected = "request 1 of 1 never came")]
async fn a_missing_request_fails() {
    let (client, server) = one_get().start();
    drop(client);
    server.finish().await;
}
