//! A page of search hits in one call: full though many better-ranked hits fall below the trust
//! floor or outside the ids asked for, never holding a recalled node, by words when the query's
//! vector cannot be used (saying why), each hit with what a caller shows. On every backend.

use cheesedb::{
    Agent, Error, FoundKind, Hit, Id, Leg, Mode, Options, Ranking, ReadSet, Removal, SearchPage, SearchQuery,
    TrustLevel, TrustRules, VectorProblem,
};
use cheesedb_tests::backend::Backend;

use TrustLevel::{High, Low, Normal};

/// Web pages that mention rain more often than anything else: the best keyword hits.
const WEB_PAGES: usize = 60;
/// User messages that mention rain once among other words: ranked below every web page.
const USER_MESSAGES: usize = 12;
/// The page size.
const LIMIT: usize = 10;

fn rules() -> TrustRules {
    TrustRules::new().with("web_page", Low).with("user_message", High)
}

fn open_alice<B: Backend>(place: &B) -> Agent<B::Storage> {
    let store = place.open(Options::default()).unwrap();
    store.open_agent(&store.create_agent("alice").unwrap()).unwrap()
}

/// The web pages, each with a memory learned from it alone (low trust too), then the user
/// messages; every node gets a vector close to `[1, 0]`, the web pages' closest.
struct Fixture {
    web: Vec<Id>,
    learned_from_web: Vec<Id>,
    user: Vec<Id>,
}

fn fixture<S: cheesedb::SharedStorage>(alice: &Agent<S>) -> Fixture {
    let (mut web, mut learned_from_web, mut user) = (Vec::new(), Vec::new(), Vec::new());
    for index in 0..WEB_PAGES {
        let page = alice.add_lot("web_page", format!("rain rain rain report {index}").as_bytes()).unwrap();
        alice.set_vector(page, &[1.0, 0.001 * index as f32]).unwrap();
        let memory = alice.remember(format!("rain rain note {index}").as_bytes(), &[Leg::from([page])]).unwrap();
        alice.set_vector(memory, &[1.0, 0.1 + 0.001 * index as f32]).unwrap();
        web.push(page);
        learned_from_web.push(memory);
    }
    for index in 0..USER_MESSAGES {
        let text = format!("it may rain later today, said the user in message {index}");
        let message = alice.add_lot("user_message", text.as_bytes()).unwrap();
        alice.set_vector(message, &[1.0, 0.5 + 0.01 * index as f32]).unwrap();
        user.push(message);
    }
    Fixture { web, learned_from_web, user }
}

fn ids(page: &SearchPage) -> Vec<Id> {
    page.found.iter().map(|found| found.id).collect()
}

fn hit_ids(hits: &[Hit]) -> Vec<Id> {
    hits.iter().map(|hit| hit.id).collect()
}

fn a_page_is_full_in_one_call_though_many_low_trust_hits_rank_first<B: Backend>() {
    let place = B::new();
    let alice = open_alice(&place);
    let fixture = fixture(&alice);
    let plain = alice.search("rain", WEB_PAGES * 2).unwrap();
    assert!(hit_ids(&plain).iter().all(|id| !fixture.user.contains(id)), "every web hit ranks before the user's");

    let floor = SearchQuery::new("rain", LIMIT).least_trust(Normal);
    let page = alice.search_page_under(&floor, &rules()).unwrap();
    assert_eq!(page.ranking, Ranking::Keyword);
    assert_eq!(ids(&page), hit_ids(&alice.search("rain", usize::MAX).unwrap()[WEB_PAGES * 2..][..LIMIT]));
    for found in &page.found {
        assert!(fixture.user.contains(&found.id));
        assert_eq!((found.trust, found.label(), found.has_vector), (High, Some("user_message"), true));
        assert_eq!(Some(&found.content[..]), alice.get(found.id).unwrap().content());
    }
    let high = alice.search_page_under(&SearchQuery::new("rain", LIMIT).least_trust(High), &rules()).unwrap();
    assert_eq!(ids(&high), ids(&page));

    // By words and vector: the web pages are the vector's closest too, and still passed over.
    let hybrid = alice.search_page_under(&floor.clone().vector(vec![1.0, 0.0]), &rules()).unwrap();
    assert_eq!(hybrid.ranking, Ranking::Hybrid);
    assert_eq!(hybrid.found.len(), LIMIT);
    assert!(hybrid.found.iter().all(|found| fixture.user.contains(&found.id) && found.trust == High));

    // Without a floor the page is the plain search's, hit for hit.
    let everything = alice.search_page_under(&SearchQuery::new("rain", LIMIT), &rules()).unwrap();
    let expected = alice.search("rain", LIMIT).unwrap();
    assert_eq!(ids(&everything), hit_ids(&expected));
    assert!(everything.found.iter().zip(&expected).all(|(found, hit)| found.score == hit.score));
    assert!(everything.found.iter().all(|found| found.trust == Low));
    let hybrid_everything =
        alice.search_page_under(&SearchQuery::new("rain", LIMIT).vector(vec![1.0, 0.0]), &rules()).unwrap();
    assert_eq!(ids(&hybrid_everything), hit_ids(&alice.search_hybrid("rain", &[1.0, 0.0], LIMIT).unwrap()));
    let _ = fixture.web;
}

fn a_recalled_node_is_never_found<B: Backend>() {
    let place = B::new();
    let alice = open_alice(&place);
    let fixture = fixture(&alice);
    let recalled_message = fixture.user[0];
    let erased_page = fixture.web[0];
    alice.recall(recalled_message, Mode::Fair, Removal::Untrusted).unwrap();
    let died = alice.recall(erased_page, Mode::Fair, Removal::Erase).unwrap();
    assert_eq!(died, vec![fixture.learned_from_web[0]]);
    let gone = [recalled_message, erased_page, fixture.learned_from_web[0]];
    for vector in [None, Some(vec![1.0, 0.0]), Some(vec![1.0, 0.0, 0.0])] {
        for least_trust in [Low, Normal, High] {
            for among in [None, Some(gone.to_vec())] {
                let mut query = SearchQuery::new("rain user report note", usize::MAX).least_trust(least_trust);
                query.vector.clone_from(&vector);
                query.among.clone_from(&among);
                let page = alice.search_page_under(&query, &rules()).unwrap();
                assert!(
                    page.found.iter().all(|found| !gone.contains(&found.id)),
                    "{vector:?} {least_trust:?} {among:?}: {:?}",
                    ids(&page)
                );
                if among.is_some() {
                    assert!(page.found.is_empty());
                }
            }
        }
    }
    let all = alice.search_page_under(&SearchQuery::new("rain", usize::MAX), &rules()).unwrap();
    assert_eq!(all.found.len(), WEB_PAGES * 2 + USER_MESSAGES - gone.len());
}

fn a_vector_that_cannot_be_used_falls_back_to_words_and_says_why<B: Backend>() {
    let place = B::new();
    let alice = open_alice(&place);
    fixture(&alice);
    let words = alice.search_page_under(&SearchQuery::new("rain", LIMIT).least_trust(Normal), &rules()).unwrap();
    let cases = [
        (
            vec![1.0, 0.0, 0.0],
            Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected: 2, found: 3 } },
        ),
        (vec![0.0, 0.0], Error::InvalidVector { problem: VectorProblem::AllZero }),
        (Vec::new(), Error::InvalidVector { problem: VectorProblem::Empty }),
        (
            vec![1.0; cheesedb::limits::VECTOR_DIMENSION_MAX + 1],
            Error::LimitExceeded {
                what: cheesedb::Limit::VectorDimension,
                size: cheesedb::limits::VECTOR_DIMENSION_MAX as u64 + 1,
                limit: cheesedb::limits::VECTOR_DIMENSION_MAX as u64,
            },
        ),
    ];
    for (vector, refused) in cases {
        let query = SearchQuery::new("rain", LIMIT).least_trust(Normal).vector(vector);
        let page = alice.search_page_under(&query, &rules()).unwrap();
        assert_eq!(page.ranking, Ranking::KeywordInstead { refused });
        assert_eq!(page.found, words.found);
    }
}

fn among_keeps_to_the_ids_given_and_a_page_shows_each_kind<B: Backend>() {
    let place = B::new();
    let alice = open_alice(&place);
    let fixture = fixture(&alice);
    let read = fixture.user[3];
    let mut reads = ReadSet::new();
    reads.note(read);
    let memory =
        alice.remember_tracked(b"rain is coming, the user says", &[Leg::from([fixture.user[5]])], &reads).unwrap();
    let wanted = vec![fixture.web[7], fixture.learned_from_web[9], memory, fixture.user[1]];
    let query = SearchQuery::new("rain", LIMIT).among(wanted.iter().copied());
    let page = alice.search_page_under(&query, &rules()).unwrap();
    let mut found = ids(&page);
    found.sort();
    let mut expected = wanted.clone();
    expected.sort();
    assert_eq!(found, expected);
    let shown = page.found.iter().find(|found| found.id == memory).unwrap();
    assert_eq!(shown.kind, FoundKind::Memory { tracked_parents: vec![read] });
    assert_eq!((shown.trust, shown.has_vector, shown.label()), (High, false, None));
    assert_eq!(shown.content, b"rain is coming, the user says");
    let page_of_lot = page.found.iter().find(|found| found.id == fixture.web[7]).unwrap();
    assert_eq!(page_of_lot.kind, FoundKind::Lot { label: String::from("web_page") });
    assert_eq!(page_of_lot.tracked_parents(), &[] as &[Id]);
    // The floor and the ids together: the low ones go, and the page takes no other id.
    let floor = SearchQuery::new("rain", LIMIT).among(wanted.iter().copied()).least_trust(Normal);
    let mut found = ids(&alice.search_page_under(&floor, &rules()).unwrap());
    found.sort();
    assert_eq!(found, [fixture.user[1], memory]);
    assert!(alice.search_page_under(&SearchQuery::new("rain", LIMIT).among([]), &rules()).unwrap().found.is_empty());
    assert!(alice.search_page_under(&SearchQuery::new("rain", 0), &rules()).unwrap().found.is_empty());
}

cheesedb_tests::conformance!(
    a_page_is_full_in_one_call_though_many_low_trust_hits_rank_first,
    a_recalled_node_is_never_found,
    a_vector_that_cannot_be_used_falls_back_to_words_and_says_why,
    among_keeps_to_the_ids_given_and_a_page_shows_each_kind,
);
